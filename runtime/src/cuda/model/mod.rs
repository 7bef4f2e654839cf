//! The GPU performance model (`--backend cuda-model`): the CUDA backend's kernels and launch
//! plans run as on the emulator, at the modelled GPU's real launch configuration (blocks of 256
//! threads, grids sized by its SM count), with every load and store instrumented. From the
//! sampled warps' accesses it counts, per launch: global requests and their 32-byte sectors
//! against the coalesced ideal (`warps.rs`), what reaches L2 and DRAM through the sampled
//! warps' shares of L1 and L2 (`caches.rs`), the latency of each load request (the level that
//! served its slowest sector), shared-memory wavefronts and bank conflicts, and every thread's
//! float operations and warp shuffles; occupancy comes from ptxas's register report (`ptxas.rs`); the time from a roofline with latency terms (`estimate.rs`), on a GPU of the
//! table (`gpus.rs`, `OGHAM_GPU_MODEL`). Host-device copies and allocations, which the executor
//! makes around each launch, are counted and timed too.
//!
//! Invariants: every block of every launch runs, sampled or not, so the outputs are exactly the
//! emulator's (and every other backend's); sampling (`OGHAM_MODEL_WARPS`, default 64 warps per
//! launch spread evenly over the grid; `all` for every warp) only scales the memory counts.
//! Float and shuffle counts are exact. Host steps the executor evaluates itself are not modelled.
//!
//! With `OGHAM_PROFILE`, each kernel prints `ogham-profile: kernel NAME (LEVEL) modeled MS ms`
//! and its counts, and the run ends with `ogham-profile: modeled total MS ms on DEVICE`. With
//! `OGHAM_PROFILE=sites`, each launch also lists its costliest global accesses with their lines
//! of the translation unit (`code.rs`). The lines are made in `lines.rs`.

mod caches;
pub mod code;
pub mod estimate;
pub mod gpus;
mod lines;
mod ptxas;
mod region;
pub mod warps;

use super::device::ThreadBlock;
use super::emulator::{self, Build, open_library, symbol_error, trampolines};
use super::units::Compiling;
use super::{Device, Mark, Res, machine_error};
use crate::error::{R_CUDA, R_CUDA_UNAVAILABLE};
use caches::SectorCache;
use code::Code;
use estimate::{Counts, Estimate, Occupancy, Shape};
use gpus::Gpu;
use lines::profile_lines;
pub use lines::total_line;
use ogham_ir::artifact::cuda::{Counting, CudaProgram, Unit};
use ptxas::Resources;
use region::Region;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use warps::Rec;

const INSTRUMENTATION: &str = include_str!("model.hpp");

/// The instrumented build: g++ calls a hook for every load and store (`model.hpp`).
const INSTRUMENTED: Build = Build {
    cache: "cuda-model",
    options: &[
        "-O1",
        "-g1",
        "-DOG_MODEL",
        "-fsanitize=kernel-address",
        "--param",
        "asan-instrumentation-with-call-threshold=0",
        "--param",
        "asan-stack=0",
        "--param",
        "asan-globals=0",
    ],
};

/// Threads per block, as on a GPU (`driver.rs`).
const BLOCK: i64 = 256;
/// Warps sampled per launch unless `OGHAM_MODEL_WARPS` says otherwise.
const DEFAULT_SAMPLED_WARPS: i64 = 64;
/// Address space reserved for device memory (only touched pages take memory).
const REGION: u64 = 1 << 40;

type SinkFn = unsafe extern "C" fn(*mut std::ffi::c_void, u32, *const *const Rec, *const u64);
type ModelRun = unsafe extern "C" fn(
    u64,
    u32,
    u32,
    *const u64,
    *const u32,
    SinkFn,
    *mut std::ffi::c_void,
    u64,
    u64,
    *mut u64,
    u32,
);

/// One launch, modelled.
#[derive(Debug, Clone)]
pub struct LaunchReport {
    pub kernel: String,
    pub blocks: i64,
    pub resources: Resources,
    pub occupancy: Occupancy,
    pub counts: Counts,
    pub sampled_warps: i64,
    /// The sampled warps' global accesses by site in the code, in order of first execution.
    pub sites: Vec<Site>,
    pub estimate: Estimate,
}

/// The global requests of one site of a kernel's code, in the sampled warps (not scaled).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Site {
    /// Where it is in the code, as recorded (the low 32 bits of an address: [`Code::offset`]).
    pub address: u32,
    pub store: bool,
    /// Bytes per lane.
    pub size: u64,
    pub requests: u64,
    pub sectors: u64,
    pub ideal_sectors: u64,
    /// The loads' latency in cycles, each at the level that served its slowest sector, as the
    /// estimate's latency term adds them.
    pub load_latency: f64,
}

/// One kernel of the program (a statement: its launches and the copies and allocations around
/// them).
#[derive(Debug, Clone, Default)]
pub struct KernelReport {
    pub name: String,
    pub level: String,
    pub launches: Vec<LaunchReport>,
    pub copies: u64,
    pub copied_bytes: u64,
    pub allocations: u64,
    pub allocated_bytes: u64,
    /// Fills and copies within the device (the host program's data steps, `steps.rs`).
    pub device_steps: u64,
    pub device_step_bytes: u64,
    pub seconds: f64,
}

/// A whole run, modelled.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub device: String,
    pub kernels: Vec<KernelReport>,
    /// Why registers were assumed rather than read from ptxas, if they were.
    pub assumed_registers: Option<String>,
    /// The instrumented code, to find the sites' lines in (`None` before a program is loaded
    /// or when the loader cannot say where the library is).
    pub code: Option<Code>,
    /// The side queue's copies, if there were any.
    pub side: Option<SideQueue>,
    /// The host's and the main queue's clocks.
    pub clocks: Clocks,
}

/// The two clocks of a modelled run, in seconds from its start. The host queues launches and
/// fills without waiting, allocates memory, and waits for the main queue
/// only where it must: a synchronous copy (which also waits for everything queued before it) or
/// a launch it waits for. The main queue runs what was queued in order, each piece once the
/// host has queued it and the piece before it has finished. So the host's own costs
/// (allocations, queuing) hide behind kernels that run long enough, as on a GPU.
#[derive(Debug, Clone, Copy, Default)]
pub struct Clocks {
    pub host: f64,
    pub device: f64,
}

impl Clocks {
    /// The host spends `host` seconds queuing a piece that runs `device` seconds.
    fn queue(&mut self, host: f64, device: f64) {
        self.host += host;
        self.device = self.device.max(self.host) + device;
    }

    /// The host waits for the main queue.
    fn wait(&mut self) {
        self.host = self.host.max(self.device);
    }

    /// A synchronous copy of `seconds`: it starts when the host has waited for the main queue,
    /// and both go on when it ends.
    fn sync(&mut self, seconds: f64) {
        self.wait();
        self.host += seconds;
        self.device = self.host;
    }
}

/// The side queue's copies (an entry point run in parts of rows, `ireval::parts`): they run
/// beside the main queue's launches, which wait for them only where they read their results.
#[derive(Debug, Clone, Copy, Default)]
pub struct SideQueue {
    pub copies: u64,
    pub bytes: u64,
    /// The copies' own time.
    pub seconds: f64,
    /// When the last one ends.
    pub end: f64,
    /// The main queue's time spent waiting for them.
    pub waited: f64,
}

impl Report {
    /// The main queue's time: its kernels, copies and steps, the time it waited for the host
    /// and for the side queue.
    pub fn main_seconds(&self) -> f64 {
        self.clocks.device
    }

    /// The run's modelled time: until the host, the main queue and the side queue are all done.
    pub fn total_seconds(&self) -> f64 {
        let side_end = self.side.map_or(0.0, |s| s.end);
        self.clocks.device.max(self.clocks.host).max(side_end)
    }
}

pub struct Model {
    gpu: &'static Gpu,
    sampled_warps: Option<i64>,
    region: Region,
    run: Option<ModelRun>,
    library: Option<libloading::Library>,
    names: HashMap<u64, String>,
    /// The kernels' trampolines, by kernel name.
    functions: HashMap<String, u64>,
    /// ptxas's report of each unit (`None`: no NVRTC).
    resources: Option<Compiling<Result<HashMap<String, Resources>, String>>>,
    profile: bool,
    /// `OGHAM_PROFILE=sites`: list each launch's costliest sites with their lines.
    profile_sites: bool,
    /// The kernel being run and the finished ones.
    current: Mutex<KernelReport>,
    report: Arc<Mutex<Report>>,
}

/// Why the model cannot run here (no `g++`), or `None`.
pub fn unavailable() -> Option<String> {
    emulator::unavailable().map(|why| why.replace("the CUDA emulator", "the GPU model"))
}

/// How many warps each launch samples: `OGHAM_MODEL_WARPS` (a count, or `all`).
pub fn sampled_warps_from_env() -> Result<Option<i64>, String> {
    match std::env::var("OGHAM_MODEL_WARPS") {
        Err(_) => Ok(Some(DEFAULT_SAMPLED_WARPS)),
        Ok(v) if v.trim() == "all" => Ok(None),
        Ok(v) => match v.trim().parse::<i64>() {
            Ok(n) if n > 0 => Ok(Some(n)),
            _ => Err(format!(
                "OGHAM_MODEL_WARPS: `{v}` is neither a positive number of warps nor `all`"
            )),
        },
    }
}

impl Model {
    pub fn new(
        gpu: &'static Gpu,
        sampled_warps: Option<i64>,
        report: Arc<Mutex<Report>>,
    ) -> Res<Model> {
        if let Some(why) = unavailable() {
            return Err(machine_error(R_CUDA_UNAVAILABLE, why));
        }
        report.lock().expect("no panics while locked").device = gpu.name.to_string();
        Ok(Model {
            gpu,
            sampled_warps,
            region: Region::reserve(REGION).map_err(|e| machine_error(R_CUDA, e))?,
            run: None,
            library: None,
            names: HashMap::new(),
            functions: HashMap::new(),
            resources: None,
            profile: std::env::var_os("OGHAM_PROFILE").is_some(),
            profile_sites: std::env::var("OGHAM_PROFILE").is_ok_and(|v| v == "sites"),
            current: Mutex::new(KernelReport::default()),
            report,
        })
    }

    /// Kernel `kernel`'s registers and static shared memory, from ptxas's report of its unit;
    /// without one, [`ptxas::ASSUMED_REGISTERS`] (and the report says why).
    fn resources(&self, kernel: &str) -> Resources {
        let assumed = Resources {
            registers: ptxas::ASSUMED_REGISTERS,
            shared: 0,
            spilled: 0,
            cap: None,
        };
        let report = self.resources.as_ref().and_then(|r| r.unit_of(kernel));
        match report {
            Some((_, Ok(resources))) => resources.get(kernel).copied().unwrap_or(assumed),
            Some((_, Err(why))) => {
                self.report
                    .lock()
                    .expect("no panics while locked")
                    .assumed_registers
                    .get_or_insert_with(|| {
                        format!(
                            "{why}: {} registers per thread assumed",
                            ptxas::ASSUMED_REGISTERS
                        )
                    });
                assumed
            }
            None => assumed,
        }
    }

    /// Models one launch of `function` (`grid` blocks of `block` threads, `shared` bytes of
    /// dynamic shared memory); its modelled seconds.
    fn model_launch(
        &self,
        function: u64,
        (grid, block): (u32, u32),
        shared: u32,
        params: &[u64],
        wait: bool,
    ) -> Res<f64> {
        let run = self
            .run
            .ok_or_else(|| machine_error(R_CUDA, "the model has no program loaded".into()))?;
        let kernel = self.names.get(&function).cloned().unwrap_or_default();
        let resources = self.resources(&kernel);
        let blocks = i64::from(grid);
        let occupancy = estimate::occupancy(
            self.gpu,
            &Shape {
                blocks,
                threads_per_block: i64::from(block),
                registers_per_thread: resources.registers,
                shared_per_block: i64::from(shared) + resources.shared,
            },
        );
        let warps_per_block = (i64::from(block) + 31) / 32;
        let warps = blocks * warps_per_block;
        // Whole blocks, spread evenly over the grid: the warps of a block-level kernel's block
        // do different work (the first alone runs a map over fewer rows than it has threads),
        // so a sample of single warps at a stride would weigh some positions in the block more
        // than others (every 250th of 16,000 warps is always an even one).
        let sampled_blocks = self.sampled_warps.map_or(blocks, |n| {
            ((n + warps_per_block - 1) / warps_per_block).clamp(1, blocks)
        });
        let sampled = sampled_blocks * warps_per_block;
        let mut masks = vec![0u32; grid as usize];
        for i in 0..sampled_blocks {
            masks[(i * blocks / sampled_blocks) as usize] = (1u32 << warps_per_block) - 1;
        }
        let mut sampler = Sampler::new(self.gpu, &occupancy, i64::from(shared), sampled);
        let (lo, hi) = self.region.bounds();
        let mut thread_counts = [0u64; 5];
        // SAFETY: `function` is a trampoline of the loaded library; `params` are the kernel's
        // parameters (device addresses inside the region, live for the call); `masks` has one
        // word per block; the sink receives `sampler`, which outlives the call.
        unsafe {
            run(
                function,
                grid,
                block,
                params.as_ptr(),
                masks.as_ptr(),
                sink,
                (&mut sampler as *mut Sampler).cast(),
                lo,
                hi,
                thread_counts.as_mut_ptr(),
                workers(),
            )
        };
        let sites = std::mem::take(&mut sampler.sites_counts);
        let counts = sampler.finish(warps as f64 / sampled as f64, warps as f64, thread_counts);
        let estimate = estimate::estimate(self.gpu, &occupancy, &counts);
        {
            let mut report = self.report.lock().expect("no panics while locked");
            report
                .clocks
                .queue(self.gpu.enqueue_latency, estimate.seconds);
            if wait {
                report.clocks.wait();
            }
        }
        let mut current = self.current.lock().expect("no panics while locked");
        current.launches.push(LaunchReport {
            kernel,
            blocks,
            resources,
            occupancy,
            counts,
            sampled_warps: sampled,
            sites: sites.into_iter().flatten().collect(),
            estimate,
        });
        Ok(estimate.seconds)
    }

    /// A memset or a copy within the device, queued: a launch's latency plus its bytes through
    /// DRAM.
    fn device_step(&self, dram_bytes: usize) {
        let mut current = self.current.lock().expect("no panics while locked");
        current.device_steps += 1;
        current.device_step_bytes += dram_bytes as u64;
        self.with_clocks(|c| {
            c.queue(
                self.gpu.enqueue_latency,
                self.gpu.launch_latency + dram_bytes as f64 / self.gpu.dram_bandwidth,
            )
        });
    }

    /// Counts a synchronous host-device copy of `bytes` bytes on the main queue.
    fn copied(&self, bytes: usize) {
        let mut current = self.current.lock().expect("no panics while locked");
        current.copies += 1;
        current.copied_bytes += bytes as u64;
        let seconds = self.copy_seconds(bytes);
        self.with_clocks(|c| c.sync(seconds));
    }

    /// The time of a host-device copy of `bytes` bytes: staged through pinned slots from a
    /// megabyte on, as the driver does, otherwise direct from pageable memory.
    fn copy_seconds(&self, bytes: usize) -> f64 {
        let bandwidth = if bytes >= super::staging::STAGED_FROM {
            self.gpu.staged_bandwidth
        } else {
            self.gpu.copy_bandwidth
        };
        self.gpu.copy_latency + bytes as f64 / bandwidth
    }

    fn with_clocks<T>(&self, f: impl FnOnce(&mut Clocks) -> T) -> T {
        f(&mut self.report.lock().expect("no panics while locked").clocks)
    }

    /// Counts a copy of `bytes` bytes on the side queue, starting once the side queue is free
    /// and the main queue has reached `after`; the mark of its end.
    fn side_copied(&self, bytes: usize, after: Mark) -> Mark {
        let seconds = self.copy_seconds(bytes);
        let mut report = self.report.lock().expect("no panics while locked");
        let side = report.side.get_or_insert_with(SideQueue::default);
        side.end = side.end.max(after.0) + seconds;
        side.copies += 1;
        side.bytes += bytes as u64;
        side.seconds += seconds;
        Mark(side.end)
    }
}

/// OS threads that run blocks at once: the machine's cores.
fn workers() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
}

/// The counts of one launch's sampled warps.
struct Sampler {
    sites: HashMap<u32, u32>,
    /// Global requests by dense site number (`None`: a shared-memory site).
    sites_counts: Vec<Option<Site>>,
    /// The L1 share of the sampled warps (their resident warps' share of an SM's L1 each),
    /// and their L2 share (their share of the warps resident on the device).
    l1: SectorCache,
    l2: SectorCache,
    latencies: [f64; 3],
    counts: Counts,
    dram_sectors: f64,
}

impl Sampler {
    fn new(gpu: &Gpu, occ: &Occupancy, shared: i64, sampled: i64) -> Sampler {
        let l1 = (gpu.l1_bytes - (occ.blocks_per_sm * shared) as f64).max(16.0 * 1024.0);
        let l1_share = (sampled as f64 / occ.warps_per_sm.max(1) as f64).min(1.0);
        let l2_share = (sampled as f64 / occ.warps_on_device.max(1) as f64).min(1.0);
        Sampler {
            sites: HashMap::new(),
            sites_counts: Vec::new(),
            l1: SectorCache::new(l1 * l1_share),
            l2: SectorCache::new(gpu.l2_bytes * l2_share),
            latencies: [gpu.l1_latency, gpu.l2_latency, gpu.dram_latency],
            counts: Counts::default(),
            dram_sectors: 0.0,
        }
    }

    fn warp(&mut self, lanes: &[&[Rec]]) {
        for (site, r) in warps::requests(lanes, &mut self.sites) {
            if r.shared {
                let (w, ideal) = warps::wavefronts(&r);
                self.counts.shared_requests += 1.0;
                self.counts.wavefronts += w as f64;
                self.counts.ideal_wavefronts += ideal as f64;
                continue;
            }
            let (sectors, ideal) = warps::sectors(&r);
            if self.sites_counts.len() <= site {
                self.sites_counts.resize(site + 1, None);
            }
            let address = || {
                let found = self
                    .sites
                    .iter()
                    .find(|&(_, &dense)| dense as usize == site);
                found.map_or(0, |(&address, _)| address)
            };
            let at = self.sites_counts[site].get_or_insert_with(|| Site {
                address: address(),
                store: r.store,
                size: r.size,
                ..Site::default()
            });
            at.requests += 1;
            at.sectors += sectors.len() as u64;
            at.ideal_sectors += ideal;
            self.counts.requests += 1.0;
            self.counts.sectors += sectors.len() as f64;
            // The L1 looks up one 128-byte line a clock (4 sectors).
            let mut lines: Vec<u64> = sectors.iter().map(|s| s >> 2).collect();
            lines.dedup();
            self.counts.lines += lines.len() as f64;
            self.counts.ideal_sectors += ideal as f64;
            // The level that served the request's slowest sector (0: L1, 1: L2, 2: DRAM).
            let mut level = 0;
            for s in sectors {
                level = level.max(self.sector(s, r.store));
            }
            // A load waits for its slowest sector, after the L1 has looked up every line.
            if !r.store {
                let latency = self.latencies[level] + lines.len() as f64 - 1.0;
                self.counts.load_latency += latency;
                if let Some(at) = &mut self.sites_counts[site] {
                    at.load_latency += latency;
                }
            }
        }
    }

    /// Sends one sector through the caches; the level that served it.
    fn sector(&mut self, s: u64, store: bool) -> usize {
        let c = &mut self.counts;
        // L1 keeps loads only (stores write through to L2).
        if !store && self.l1.access(s, false).hit {
            c.l1_hits += 1.0;
            return 0;
        }
        c.l2_sectors += 1.0;
        let o = self.l2.access(s, store);
        if o.wrote_back {
            self.dram_sectors += 1.0;
        }
        if o.hit {
            c.l2_hits += 1.0;
            1
        } else {
            // A store fills its sector in L2 without reading DRAM.
            if !store {
                self.dram_sectors += 1.0;
            }
            2
        }
    }

    /// The counts scaled by `scale` (warps per sampled warp), with the float and shuffle
    /// counts of every thread (`thread_counts`: f32, f64, f32 special, f64 special, shuffles).
    fn finish(mut self, scale: f64, warps: f64, thread_counts: [u64; 5]) -> Counts {
        self.dram_sectors += self.l2.dirty() as f64;
        let c = self.counts;
        Counts {
            warps,
            requests: c.requests * scale,
            sectors: c.sectors * scale,
            lines: c.lines * scale,
            ideal_sectors: c.ideal_sectors * scale,
            l2_sectors: c.l2_sectors * scale,
            l2_hits: c.l2_hits * scale,
            l1_hits: c.l1_hits * scale,
            load_latency: c.load_latency * scale,
            dram_bytes: self.dram_sectors * 32.0 * scale,
            shared_requests: c.shared_requests * scale,
            wavefronts: c.wavefronts * scale,
            ideal_wavefronts: c.ideal_wavefronts * scale,
            flops32: thread_counts[0] as f64,
            flops64: thread_counts[1] as f64,
            special: (thread_counts[2] + thread_counts[3]) as f64,
            shuffles: thread_counts[4] as f64 / 32.0,
        }
    }
}

/// Receives a sampled warp's traces from the instrumented library.
///
/// # Safety
/// `cx` is the launch's `Sampler`; `traces` and `lengths` hold `lanes` entries, each trace
/// `lengths[l]` records long, alive for the call.
unsafe extern "C" fn sink(
    cx: *mut std::ffi::c_void,
    lanes: u32,
    traces: *const *const Rec,
    lengths: *const u64,
) {
    // SAFETY: as the function's contract says.
    let (sampler, lanes) = unsafe {
        let traces = std::slice::from_raw_parts(traces, lanes as usize);
        let lengths = std::slice::from_raw_parts(lengths, lanes as usize);
        let lanes: Vec<&[Rec]> = traces
            .iter()
            .zip(lengths)
            .map(|(&t, &n)| {
                if n == 0 {
                    &[][..]
                } else {
                    std::slice::from_raw_parts(t, n as usize)
                }
            })
            .collect();
        (&mut *cx.cast::<Sampler>(), lanes)
    };
    sampler.warp(&lanes);
}

impl Device for Model {
    fn name(&self) -> &'static str {
        "cuda-model"
    }

    fn modelled(&self) -> bool {
        true
    }

    fn counting(&self) -> Counting {
        Counting::Counted
    }

    fn bind(&self) -> Res<()> {
        Ok(())
    }

    fn block_size(&self) -> i64 {
        BLOCK
    }

    /// At the kernel's registers and static shared memory in ptxas's report.
    fn thread_block(&self, function: u64) -> Res<ThreadBlock> {
        let kernel = self.names.get(&function).cloned().unwrap_or_default();
        let resources = self.resources(&kernel);
        Ok(estimate::thread_block(self.gpu, resources, BLOCK))
    }

    fn multiprocessors(&self) -> i64 {
        self.gpu.sms
    }

    /// ptxas's reports are made per unit, in parallel, each at the first launch of one of its
    /// kernels at the latest (`units.rs`); the emulation is one library.
    fn load(&mut self, program: &CudaProgram) -> Res<()> {
        let gpu = self.gpu;
        self.resources = Some(Compiling::start(program, move |unit: &Unit| {
            ptxas::report(unit, gpu)
        }));
        let names = program.kernel_names();
        let unit = emulator::unit(&program.source(), &format!("{INSTRUMENTATION}\n"), &names);
        let library = open_library(&unit, &INSTRUMENTED)?;
        // SAFETY: the symbol has the type `model.hpp` declares.
        let run: libloading::Symbol<ModelRun> =
            unsafe { library.get(b"og_model_run") }.map_err(symbol_error)?;
        self.run = Some(*run);
        self.report.lock().expect("no panics while locked").code = Code::of(*run as usize, unit);
        self.functions = trampolines(&library, &names)?;
        self.names = self
            .functions
            .iter()
            .map(|(n, &f)| (f, n.clone()))
            .collect();
        self.library = Some(library);
        Ok(())
    }

    fn function(&self, name: &str) -> Res<u64> {
        super::loaded_kernel(&self.functions, name)
    }

    fn alloc(&self, bytes: usize) -> Res<u64> {
        let ptr = self.region.alloc(bytes).ok_or_else(|| {
            machine_error(
                crate::error::R_OUT_OF_MEMORY,
                format!("out of memory: cannot allocate {bytes} bytes"),
            )
        })?;
        let mut current = self.current.lock().expect("no panics while locked");
        current.allocations += 1;
        current.allocated_bytes += bytes as u64;
        self.with_clocks(|c| c.host += self.gpu.alloc_latency);
        Ok(ptr)
    }

    fn free(&self, ptr: u64) {
        self.region.free(ptr);
    }

    fn upload(&self, dst: u64, src: &[u8]) -> Res<()> {
        // SAFETY: `dst` is a piece of at least `src.len()` bytes.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst as *mut u8, src.len()) };
        self.copied(src.len());
        Ok(())
    }

    fn download(&self, dst: &mut [u8], src: u64) -> Res<()> {
        // SAFETY: `src` is a piece of at least `dst.len()` bytes.
        unsafe { std::ptr::copy_nonoverlapping(src as *const u8, dst.as_mut_ptr(), dst.len()) };
        self.copied(dst.len());
        Ok(())
    }

    fn side_upload(&self, dst: u64, src: &[u8]) -> Res<Mark> {
        // SAFETY: `dst` is a piece of at least `src.len()` bytes.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst as *mut u8, src.len()) };
        Ok(self.side_copied(src.len(), Mark::default()))
    }

    fn side_download(&self, dst: &mut [u8], src: u64, after: Mark) -> Res<()> {
        // SAFETY: `src` is a piece of at least `dst.len()` bytes.
        unsafe { std::ptr::copy_nonoverlapping(src as *const u8, dst.as_mut_ptr(), dst.len()) };
        self.side_copied(dst.len(), after);
        Ok(())
    }

    /// The host waits for the main queue.
    fn finish_part(&self) -> Res<Mark> {
        Ok(Mark(self.with_clocks(|c| {
            c.wait();
            c.device
        })))
    }

    /// The host waits for the side copy (its thread has it), and the main queue goes on after.
    fn wait_for(&self, mark: Mark) {
        let mut report = self.report.lock().expect("no panics while locked");
        let Clocks { host, device } = report.clocks;
        if mark.0 > device {
            report.side.get_or_insert_with(SideQueue::default).waited += mark.0 - device;
        }
        report.clocks = Clocks {
            host: host.max(mark.0),
            device: device.max(mark.0),
        };
    }

    fn zero(&self, ptr: u64, bytes: usize) -> Res<()> {
        // SAFETY: `ptr` is a piece of at least `bytes` bytes.
        unsafe { std::ptr::write_bytes(ptr as *mut u8, 0, bytes) };
        self.device_step(bytes);
        Ok(())
    }

    fn fill(&self, ptr: u64, pattern: &[u8], count: usize) -> Res<()> {
        emulator::host_fill(ptr, pattern, count);
        self.device_step(count * pattern.len());
        Ok(())
    }

    fn copy(&self, dst: u64, src: u64, bytes: usize) -> Res<()> {
        emulator::host_copy(dst, src, bytes);
        self.device_step(2 * bytes);
        Ok(())
    }

    fn free_memory(&self) -> Res<usize> {
        Ok(self.gpu.memory)
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
        self.model_launch(function, (grid, block), shared, params, wait)
    }

    /// The executor's last call (`host-reads`, copies after the last kernel) is reported only
    /// when there were such copies.
    fn finish_kernel(&self, name: &str, level: &str) -> bool {
        let mut kernel = std::mem::take(&mut *self.current.lock().expect("no panics while locked"));
        if kernel.launches.is_empty() && kernel.copies + kernel.allocations == 0 {
            return true;
        }
        kernel.name = name.to_string();
        kernel.level = level.to_string();
        let mut report = self.report.lock().expect("no panics while locked");
        // The main queue's time since the kernel before (the sum is its clock).
        let before: f64 = report.kernels.iter().map(|k| k.seconds).sum();
        kernel.seconds = report.clocks.device - before;
        if self.profile {
            let code = report.code.as_ref().filter(|_| self.profile_sites);
            for line in profile_lines(&kernel, code) {
                eprintln!("ogham-profile: {line}");
            }
        }
        report.kernels.push(kernel);
        true
    }
}
