//! The CPU executor (`--backend cpu`): the host program of a kernel-IR program runs in the IR
//! evaluator, and every kernel that the code generator compiled (a [`CpuCodegen`]: the
//! compiler's Cranelift backend, `ogham_compiler::back::cpu`, which the `ogham` crate hands in;
//! the runtime never names the compiler) runs as machine code on all cores (a rayon pool of this
//! process's own, [`workers`], so that a forked child starts its own workers instead of waiting
//! for its parent's). Kernels the backend cannot compile yet are evaluated (`ogham dev --print
//! clif` lists them with the reason).
//!
//! Work split: a kernel's space is segments (points of its outer dimensions) × innermost
//! indices. Many segments: contiguous ranges of segments per task. Few segments and a long
//! innermost dimension: ranges of the innermost dimension per task (a reduction's tasks then
//! return partial results, combined in order by the kernel's combine function, so the result
//! is deterministic for a given number of workers); a long scan runs in two passes: each task
//! computes its range's total, then scans its range again starting from the combined totals of
//! the ranges before it. Histograms (and scatters, which are
//! histograms that overwrite) apply the points of a segment in order, as the interpreter
//! defines them: in one task when there are few segments, by ranges of segments otherwise.
//!
//! With the environment variable `OGHAM_PROFILE` set, every compiled kernel's launch prints its
//! wall time on standard error (`ogham-profile: kernel main_k6 (thread) 409.7 ms`), and a call's
//! first launch when it starts, counted from the process's start ([`profile_from`]).
//!
//! Run-time errors of compiled code (bounds, division by zero, sizes) are rebuilt from the
//! failed check's [`ogham_ir::abi::ErrorSite`] with the interpreter's codes and messages; of
//! several failing points, the first in row-major order is reported.

pub mod aot;
mod code;
mod codegen;
mod helpers;
#[cfg(feature = "jit")]
pub mod native;
pub mod packed;
pub(crate) mod untrusted;

pub use code::host_cpu_features;
pub use codegen::{Codegen, CpuCodegen};

#[cfg(feature = "jit")]
use crate::error::R_INTERNAL;
use crate::error::{R_OUT_OF_MEMORY, Res, error};
use crate::ireval::eval::{Evaluator, Launcher, Val};
use crate::ireval::{self, Thresholds};
use crate::kernel_io::{Io, KernelFailure, Operand, failure_diagnostic, kernel_index};
use crate::value::{ArrayData, Value};
use code::Entry;
use helpers::Ctx;
use ogham_ir::abi::{ArgSlots, ArgValue, kernels};
#[cfg(feature = "jit")]
use ogham_ir::artifact::cpu::JitKernel;
use ogham_ir::artifact::cpu::KernelInfo;
#[cfg(feature = "jit")]
use ogham_ir::diag::Diagnostic;
use ogham_ir::kir::Program;
use ogham_ir::kir::{SegKind, SegLevel, SegOp, ThresholdKind};
use ogham_ir::{Body, Exp, VarId};
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::OnceLock;

/// The default of a threshold on the CPU, where a few dozen parallel tasks use every core:
/// outer parallelism (`suff_outer_par_*`) from 64 points; block-level versions
/// (`suff_intra_par_*`) never (a block is one task here, so the fully distributed version is
/// the parallel one); a Block-level version, where one runs, one block per outer element
/// (`suff_block_par_*`: always).
pub fn cpu_threshold_default(kind: ThresholdKind) -> i64 {
    match kind {
        ThresholdKind::SuffOuterPar => 64,
        ThresholdKind::SuffIntraPar => i64::MAX,
        ThresholdKind::SuffBlockPar => 0,
    }
}

/// Runs entry point `entry` of kernel-IR `program` on the CPU, its kernels JIT-compiled by
/// `codegen` for this call (an [`Executable`] compiles them once for many calls).
#[cfg(feature = "jit")]
pub fn run(
    codegen: Codegen,
    program: &Program,
    entry: &str,
    args: Vec<Value>,
    thresholds: &Thresholds,
) -> Res<Vec<Value>> {
    let function = program.functions.iter().position(|f| f.name == entry);
    run_kernels(
        program,
        function,
        entry,
        args,
        thresholds,
        move || match function {
            Some(f) => jit_entry(codegen, program, f)
                .map(|code| KernelCode::Owned(Box::new(code)))
                .map_err(codegen_error),
            None => Ok(KernelCode::Borrowed(&[])),
        },
    )
}

/// A kernel-IR program whose kernels become machine code at most once: on the first call of
/// each entry point (thread-safe; later calls reuse the code) its kernels are JIT-compiled by
/// the executable's [`CpuCodegen`], or
/// taken from a [`NativeStore`] (code a process made before) or compiled to native code and put
/// there; or all of them are loaded at once ([`Executable::with_kernels`]: an ahead-of-time
/// image). The machine code lives as long as the executable.
pub struct Executable {
    program: Program,
    code: Code,
}

/// Where an executable keeps its entry points' native code between processes (the on-disk
/// cache of `ogham::cache`).
#[cfg(feature = "jit")]
pub trait NativeStore: Send + Sync {
    /// The code stored for entry point `entry`, if there is intact code (made by this build
    /// for this CPU; the store verifies that).
    fn load(&self, entry: &str) -> Option<native::Native>;
    /// Keeps the code of entry point `entry`.
    fn store(&self, entry: &str, native: &native::Native);
    /// Code that `load` returned could not be loaded: it is not to be trusted again.
    fn reject(&self, entry: &str, why: &str);
}

enum Code {
    /// Per entry point (index in `Program::functions`): its kernels' code, or why code
    /// generation failed; made by the JIT, or through the store.
    #[cfg(feature = "jit")]
    Lazy {
        entries: Vec<OnceLock<Result<EntryCode, String>>>,
        store: Option<Box<dyn NativeStore>>,
        codegen: Codegen,
    },
    /// Every kernel statement's code in the order of [`kernels`]; `by_function[f]` is the
    /// range of entry point `f`'s statements. `_memory` owns the code.
    Loaded {
        kernels: Vec<Option<Launchable>>,
        by_function: Vec<std::ops::Range<usize>>,
        _memory: Box<dyn Send + Sync>,
    },
}

/// The compiled kernels of one entry point, in statement order, with the memory holding their
/// code.
#[cfg(feature = "jit")]
struct EntryCode {
    kernels: Vec<Option<Launchable>>,
    _memory: Box<dyn Send + Sync>,
}

/// JIT-compiles the kernels of entry point `function` of `program` with `codegen`.
#[cfg(feature = "jit")]
fn jit_entry(codegen: Codegen, program: &Program, function: usize) -> Result<EntryCode, String> {
    let code = codegen.jit(program, function, &helpers::addresses())?;
    let kernels = code
        .kernels
        .into_iter()
        .map(|kernel| kernel.map(Launchable::jit))
        .collect();
    Ok(EntryCode {
        kernels,
        _memory: code.memory,
    })
}

/// The kernels of entry point `function` from `store`, or compiled to native code by `codegen`
/// and stored there.
#[cfg(feature = "jit")]
fn stored_entry(
    codegen: Codegen,
    program: &Program,
    function: usize,
    store: &dyn NativeStore,
) -> Result<EntryCode, String> {
    let name = &program.functions[function].name;
    if let Some(code) = store.load(name) {
        match native::load(&code) {
            Ok((kernels, mapped)) => {
                return Ok(EntryCode {
                    kernels,
                    _memory: Box::new(mapped),
                });
            }
            Err(why) => store.reject(name, &why),
        }
    }
    let code = native::Native::encode(codegen.native(program, function)?)?;
    match native::load(&code) {
        Ok((kernels, mapped)) => {
            store.store(name, &code);
            Ok(EntryCode {
                kernels,
                _memory: Box::new(mapped),
            })
        }
        // Code this process cannot load is not stored; the JIT makes it.
        Err(_) => jit_entry(codegen, program, function),
    }
}

#[cfg(feature = "jit")]
fn codegen_error(e: String) -> Box<Diagnostic> {
    error(
        R_INTERNAL,
        Default::default(),
        format!("CPU code generation: {e}"),
    )
}

impl Executable {
    /// `program`, whose kernels `codegen` JIT-compiles when an entry point is first called.
    #[cfg(feature = "jit")]
    pub fn new(program: Program, codegen: Codegen) -> Executable {
        Executable::lazy(program, None, codegen)
    }

    /// `program`, whose entry points' kernels come from `store` or are compiled to native code
    /// by `codegen` and put there when an entry point is first called.
    #[cfg(feature = "jit")]
    pub fn with_store(
        program: Program,
        store: Box<dyn NativeStore>,
        codegen: Codegen,
    ) -> Executable {
        Executable::lazy(program, Some(store), codegen)
    }

    #[cfg(feature = "jit")]
    fn lazy(program: Program, store: Option<Box<dyn NativeStore>>, codegen: Codegen) -> Executable {
        let entries = program.functions.iter().map(|_| OnceLock::new()).collect();
        Executable {
            program,
            code: Code::Lazy {
                entries,
                store,
                codegen,
            },
        }
    }

    /// `program` with the machine code of every kernel statement (in the order of
    /// [`kernels`]) already made; `memory` owns that code.
    pub(crate) fn with_kernels(
        program: Program,
        kernels: Vec<Option<Launchable>>,
        memory: Box<dyn Send + Sync>,
    ) -> Result<Executable, String> {
        let sites = ogham_ir::abi::kernels(&program);
        if sites.len() != kernels.len() {
            return Err(format!(
                "{} kernels for a program of {} kernel statements",
                kernels.len(),
                sites.len()
            ));
        }
        let by_function = (0..program.functions.len())
            .map(|f| {
                let start = sites.iter().position(|s| s.function >= f);
                let start = start.unwrap_or(sites.len());
                let end = start
                    + sites[start..]
                        .iter()
                        .take_while(|s| s.function == f)
                        .count();
                start..end
            })
            .collect();
        drop(sites);
        Ok(Executable {
            program,
            code: Code::Loaded {
                kernels,
                by_function,
                _memory: memory,
            },
        })
    }

    pub fn program(&self) -> &Program {
        &self.program
    }

    /// The program, dropping the code.
    pub fn into_program(self) -> Program {
        self.program
    }

    /// Runs entry point `entry` (see `ogham_ir::kir::tuning` for `thresholds`).
    pub fn call(&self, entry: &str, args: Vec<Value>, thresholds: &Thresholds) -> Res<Vec<Value>> {
        let function = self.program.functions.iter().position(|f| f.name == entry);
        run_kernels(
            &self.program,
            function,
            entry,
            args,
            thresholds,
            move || {
                Ok(KernelCode::Borrowed(match function {
                    Some(f) => self.kernels(f)?,
                    None => &[],
                }))
            },
        )
    }

    /// The code of entry point `function`'s kernel statements, in order (made now if this is
    /// its first call).
    fn kernels(&self, function: usize) -> Res<&[Option<Launchable>]> {
        match &self.code {
            #[cfg(feature = "jit")]
            Code::Lazy {
                entries,
                store,
                codegen,
            } => {
                let code = entries[function].get_or_init(|| match store {
                    Some(store) => stored_entry(*codegen, &self.program, function, &**store),
                    None => jit_entry(*codegen, &self.program, function),
                });
                match code {
                    Ok(code) => Ok(&code.kernels),
                    Err(message) => Err(codegen_error(message.clone())),
                }
            }
            Code::Loaded {
                kernels,
                by_function,
                ..
            } => Ok(&kernels[by_function[function].clone()]),
        }
    }
}

/// The kernels' code an entry point runs with: an executable's, or compiled for one call.
enum KernelCode<'p> {
    Borrowed(&'p [Option<Launchable>]),
    #[cfg(feature = "jit")]
    Owned(Box<EntryCode>),
}

impl KernelCode<'_> {
    fn kernels(&self) -> &[Option<Launchable>] {
        match self {
            KernelCode::Borrowed(kernels) => kernels,
            #[cfg(feature = "jit")]
            KernelCode::Owned(code) => &code.kernels,
        }
    }
}

/// Runs entry point `entry` (function `function` of `program`) with the kernels' code that
/// `code` gives (in the order of its kernel statements; called in the evaluator's thread,
/// after the arguments are bound).
fn run_kernels<'p>(
    program: &'p Program,
    function: Option<usize>,
    entry: &str,
    args: Vec<Value>,
    thresholds: &Thresholds,
    code: impl FnOnce() -> Res<KernelCode<'p>> + Send + 'p,
) -> Res<Vec<Value>> {
    let mut thresholds = thresholds.clone();
    if thresholds.others.is_none() {
        for t in &program.thresholds {
            let default = cpu_threshold_default(t.id.kind);
            thresholds.named.entry(t.id).or_insert(default);
        }
    }
    ireval::run_with(program, entry, args, &thresholds, move || {
        let code = code()?;
        let stmts = kernels(program)
            .into_iter()
            .filter(|site| Some(site.function) == function)
            .map(|site| site.stmt);
        Ok(Some(Box::new(CpuLauncher {
            profile: std::env::var_os("OGHAM_PROFILE").is_some(),
            by_seg: kernel_index(stmts),
            code,
            first: true.into(),
        }) as Box<dyn Launcher>))
    })
}

/// A compiled kernel: its description and its machine code.
pub(crate) struct Launchable {
    info: KernelInfo,
    entry: Entry,
}

impl Launchable {
    /// The launchable form of a kernel JIT-compiled by a [`CpuCodegen`].
    #[cfg(feature = "jit")]
    fn jit(kernel: JitKernel) -> Launchable {
        // SAFETY: the code generator's contract: the functions were generated for this kernel
        // and live as long as the `JitCode`'s memory, which the caller keeps with them.
        let entry = unsafe { Entry::from_code(kernel.kernel, kernel.combine) };
        Launchable {
            info: kernel.info,
            entry,
        }
    }

    /// A kernel described by `info` whose code is `entry`.
    pub(crate) fn loaded(info: KernelInfo, entry: Entry) -> Launchable {
        Launchable { info, entry }
    }
}

/// When the process started, if its `main` said so ([`profile_from`]): with `OGHAM_PROFILE`, a
/// call's first kernel launch is reported relative to it.
static PROFILE_START: OnceLock<std::time::Instant> = OnceLock::new();

/// Sets the process's start for `OGHAM_PROFILE`'s "first kernel" line.
pub fn profile_from(start: std::time::Instant) {
    let _ = PROFILE_START.set(start);
}

/// Starts the worker threads in the background (a thread of its own asks every worker of the
/// pool to run once and returns at once): a process that is about to compile or load a program
/// and read its inputs then finds the workers started and awake at its first kernel, instead of
/// waiting there for their creation (about 0.1 ms on two cores).
pub fn start_workers() {
    std::thread::spawn(|| workers().map(|pool| pool.broadcast(|_| ())));
}

/// The worker pool of this process, one per process: `fork` copies a process with only the
/// forking thread, so a child that used its parent's pool (as rayon's global pool would be)
/// would wait forever for workers it does not have (Python's `multiprocessing` forks by
/// default on Linux). A `pthread_atfork` handler counts the forks; a process whose count
/// differs from its pool's (a child) builds a fresh pool at its first launch. The parent's pool
/// is leaked in the child (its threads, locks and queues belong to the parent: dropping it
/// there could block). Outside a fork this is an atomic load and a compare per launch. An error
/// when the threads cannot be started (e.g. under an address-space limit).
fn workers() -> Result<&'static rayon::ThreadPool, String> {
    use std::sync::atomic::Ordering::{AcqRel, Acquire};
    let forks = FORKS.load(Acquire);
    let current = POOL.load(Acquire);
    // SAFETY: a non-null `POOL` is a leaked `Box`, never freed.
    if let Some(pool) = unsafe { current.as_ref() }
        && pool.forks == forks
    {
        return Ok(&pool.pool);
    }
    static AT_FORK: std::sync::Once = std::sync::Once::new();
    AT_FORK.call_once(|| {
        // SAFETY: `forked` only increments an atomic (async-signal-safe, as a child handler
        // must be). Without the handler (it cannot fail but for lack of memory) a forked child
        // would hang as before; nothing else changes.
        unsafe { libc::pthread_atfork(None, None, Some(forked)) };
    });
    let fresh = Box::into_raw(Box::new(ProcessPool {
        forks,
        pool: rayon::ThreadPoolBuilder::new()
            .thread_name(|i| format!("ogham-worker-{i}"))
            .build()
            .map_err(|e| format!("cannot start the worker threads: {e}"))?,
    }));
    match POOL.compare_exchange(current, fresh, AcqRel, Acquire) {
        // SAFETY: `fresh` was leaked just above and is never freed.
        Ok(_) => Ok(&unsafe { &*fresh }.pool),
        Err(_) => {
            // Another thread installed a pool first: use that one.
            // SAFETY: `fresh` was never shared.
            drop(unsafe { Box::from_raw(fresh) });
            workers()
        }
    }
}

/// A worker pool and the fork count of the process that built it.
struct ProcessPool {
    forks: usize,
    pool: rayon::ThreadPool,
}

static POOL: std::sync::atomic::AtomicPtr<ProcessPool> =
    std::sync::atomic::AtomicPtr::new(std::ptr::null_mut());

/// How many times this process's ancestors, since the handler was installed, forked into it.
static FORKS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

extern "C" fn forked() {
    FORKS.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
}

struct CpuLauncher<'p> {
    /// `OGHAM_PROFILE` is set: print each launch's time on standard error.
    profile: bool,
    /// No kernel has been launched yet.
    first: std::sync::atomic::AtomicBool,
    /// The kernel statements of the entry point, in order (`None`: evaluated).
    code: KernelCode<'p>,
    by_seg: HashMap<*const SegOp, usize>,
}

impl Launcher for CpuLauncher<'_> {
    fn launch(&self, ev: &mut Evaluator, seg: &SegOp, pat: &[VarId]) -> Option<Res<Vec<Val>>> {
        let &i = self.by_seg.get(&(seg as *const SegOp))?;
        let kernel = self.code.kernels()[i].as_ref()?;
        let start = std::time::Instant::now();
        if self.profile
            && self.first.swap(false, std::sync::atomic::Ordering::Relaxed)
            && let Some(process) = PROFILE_START.get()
        {
            eprintln!(
                "ogham-profile: first kernel starts {:.3} ms after the process started",
                (start - *process).as_secs_f64() * 1e3
            );
        }
        let result = launch(ev, seg, pat, kernel);
        if self.profile {
            let level = match seg.level {
                SegLevel::Thread => "thread",
                SegLevel::Block => "block",
            };
            eprintln!(
                "ogham-profile: kernel {} ({level}) {:.3} ms",
                kernel.info.name,
                start.elapsed().as_secs_f64() * 1e3
            );
        }
        Some(result)
    }
}

/// A raw pointer that may cross to the worker threads (the buffers outlive the launch, and
/// the workers write disjoint parts of them).
#[derive(Clone, Copy)]
struct Shared(usize);

/// One task: segments `s0..s1`, innermost indices `i0..i1`.
type Task = (i64, i64, i64, i64);

/// Splits `0..n` into at most `parts` contiguous ranges.
fn ranges(n: i64, parts: i64) -> Vec<(i64, i64)> {
    let parts = parts.clamp(1, n.max(1));
    (0..parts)
        .map(|k| (n * k / parts, n * (k + 1) / parts))
        .filter(|(a, b)| a < b)
        .collect()
}

/// Below this many points a kernel whose points are straight-line code runs as one task.
const SERIAL_POINTS: i64 = 4096;

/// Whether a point's code loops (a sequential `loop` or SOAC, as BFAST's per-pixel kernel
/// does): then even a few points are worth spreading over the workers.
fn loops_per_point(body: &Body) -> bool {
    let mut found = false;
    ogham_ir::traverse::for_each_stmt(body, &mut |stmt| {
        found |= matches!(stmt.exp, Exp::Loop { .. } | Exp::Soac(_));
    });
    found
}

fn launch(ev: &mut Evaluator, seg: &SegOp, pat: &[VarId], kernel: &Launchable) -> Res<Vec<Val>> {
    let mut io = Io::prepare(ev, seg, pat, &kernel.info.inputs)?;
    let inputs: Vec<ArgValue> = io.operands.iter().map(Operand::arg).collect();
    let outputs: Vec<(u64, u64)> = io
        .outputs
        .iter_mut()
        .zip(&io.rows)
        .map(|((_, data), row)| (data.as_mut_ptr() as u64, *row))
        .collect();
    let slots = ArgSlots::fill(&inputs, &outputs);
    if io.runs() {
        // The kernel's tasks; the first failure in point order becomes the error.
        let pool = workers().map_err(|e| error(R_OUT_OF_MEMORY, ev.loc, e))?;
        let (segments, inner) = (io.segments, io.inner);
        let failure = pool.install(|| run_tasks(seg, kernel, &slots, segments, inner, &io.outputs));
        if let Some(f) = failure {
            let info = &kernel.info;
            return Err(failure_diagnostic(
                ev,
                &info.name,
                &info.sites,
                f.site,
                &f.details,
            ));
        }
    }
    Ok(io.finish())
}

/// The tasks of a kernel's launch, run in the worker pool (whose threads rayon's parallel
/// iterators then use); the first failure in point order.
fn run_tasks(
    seg: &SegOp,
    kernel: &Launchable,
    slots: &[u64],
    segments: i64,
    inner: i64,
    outputs: &[(Vec<usize>, ArrayData)],
) -> Option<Box<KernelFailure>> {
    let entry = &kernel.entry;
    let workers = rayon::current_num_threads() as i64;
    let total = segments * inner;
    // A histogram's segments update disjoint rows of its destinations, so tasks may take whole
    // segments; within a segment points are applied in order (one task).
    let hist = matches!(seg.kind, SegKind::Hist(_));
    let min_points = if loops_per_point(&seg.body) {
        2
    } else {
        SERIAL_POINTS
    };
    let serial = total < min_points || (hist && segments < 4 * workers);
    let by_segments = serial || segments >= 4 * workers || inner < min_points;
    let args = Shared(slots.as_ptr() as usize);
    let run = |task: Task, partial: usize, carry: usize| -> Result<(), Box<KernelFailure>> {
        let mut ctx = Ctx::new();
        let (s0, s1, i0, i1) = task;
        // SAFETY: `args` holds the slots the kernel was generated for; its outputs are
        // allocated for the whole space and each task writes only its own points.
        let status = unsafe {
            (entry.kernel)(
                &mut ctx,
                args.0 as *const u64,
                s0,
                s1,
                i0,
                i1,
                partial as *mut u64,
                carry as *const u64,
            )
        };
        if status == 0 {
            Ok(())
        } else {
            Err(Box::new(KernelFailure {
                site: ctx.site,
                details: ctx.details,
            }))
        }
    };
    let first_failure =
        |results: Vec<Result<(), Box<KernelFailure>>>| results.into_iter().find_map(Result::err);
    if by_segments {
        let parts = if serial { 1 } else { 4 * workers };
        let tasks: Vec<Task> = ranges(segments, parts)
            .into_iter()
            .map(|(a, b)| (a, b, 0, inner))
            .collect();
        first_failure(tasks.into_par_iter().map(|t| run(t, 0, 0)).collect())
    } else {
        let mut failure = None;
        for s in 0..segments {
            let chunks = ranges(inner, 4 * workers);
            let width = kernel_accumulators(seg);
            let mut partials = vec![0u64; width * chunks.len()];
            let base = Shared(partials.as_mut_ptr() as usize);
            let results: Vec<_> = chunks
                .par_iter()
                .enumerate()
                .map(|(c, (i0, i1))| {
                    let partial = if width > 0 { base.0 + 8 * width * c } else { 0 };
                    run((s, s + 1, *i0, *i1), partial, 0)
                })
                .collect();
            if let Some(f) = first_failure(results) {
                failure = Some(f);
                break;
            }
            let merged = match seg.kind {
                SegKind::Red(_) => combine_partials(entry, slots, &partials, width, s, outputs),
                SegKind::Scan(_) => match scan_carries(entry, slots, &partials, width) {
                    Err(f) => Some(f),
                    // Second pass: every range but the first again, from the totals before it.
                    Ok(carries) => first_failure(
                        chunks
                            .par_iter()
                            .enumerate()
                            .skip(1)
                            .map(|(c, (i0, i1))| {
                                let carry = carries[width * c..].as_ptr() as usize;
                                run((s, s + 1, *i0, *i1), 0, carry)
                            })
                            .collect(),
                    ),
                },
                SegKind::Map | SegKind::Hist(_) => None,
            };
            if let Some(f) = merged {
                failure = Some(f);
                break;
            }
        }
        failure
    }
}

/// The number of accumulator components of a reduction or scan kernel.
fn kernel_accumulators(seg: &SegOp) -> usize {
    match &seg.kind {
        SegKind::Red(reds) => reds.iter().map(|r| r.neutral.len()).sum(),
        SegKind::Scan(scans) => scans.iter().map(|s| s.neutral.len()).sum(),
        SegKind::Map | SegKind::Hist(_) => 0,
    }
}

/// The accumulators each range of a two-pass scan starts from: slots `width·c ..` hold the
/// totals of ranges `0..c` combined in order (range 0 starts from the neutral elements, its slots
/// are unused).
fn scan_carries(
    entry: &Entry,
    slots: &[u64],
    partials: &[u64],
    width: usize,
) -> Result<Vec<u64>, Box<KernelFailure>> {
    let Some(combine) = entry.combine else {
        return Ok(Vec::new());
    };
    let ranges = partials.len() / width.max(1);
    let mut carries = vec![0u64; partials.len()];
    let mut acc = partials[..width].to_vec();
    for c in 1..ranges {
        carries[width * c..width * (c + 1)].copy_from_slice(&acc);
        let mut ctx = Ctx::new();
        let total = &partials[c * width..(c + 1) * width];
        // SAFETY: the combine function reads `width` slots of each and writes `acc`.
        if unsafe { combine(&mut ctx, slots.as_ptr(), acc.as_mut_ptr(), total.as_ptr()) } != 0 {
            return Err(Box::new(KernelFailure {
                site: ctx.site,
                details: ctx.details,
            }));
        }
    }
    Ok(carries)
}

/// Folds the partial results of segment `s`, in order, and writes them to the outputs.
fn combine_partials(
    entry: &Entry,
    slots: &[u64],
    partials: &[u64],
    width: usize,
    s: i64,
    outputs: &[(Vec<usize>, ArrayData)],
) -> Option<Box<KernelFailure>> {
    let combine = entry.combine?;
    let mut acc = partials[..width].to_vec();
    for part in partials.chunks(width).skip(1) {
        let mut ctx = Ctx::new();
        // SAFETY: the combine function reads `width` slots of each and writes `acc`.
        let status = unsafe { combine(&mut ctx, slots.as_ptr(), acc.as_mut_ptr(), part.as_ptr()) };
        if status != 0 {
            return Some(Box::new(KernelFailure {
                site: ctx.site,
                details: ctx.details,
            }));
        }
    }
    for (c, bits) in acc.iter().enumerate() {
        let (_, data) = &outputs[c];
        let size = data.prim_type_size();
        // SAFETY: output `c` holds one element per segment; little-endian slots hold the
        // value in their low bytes.
        unsafe {
            let dst = data.as_ptr().cast_mut().add(s as usize * size);
            std::ptr::copy_nonoverlapping((bits as *const u64).cast::<u8>(), dst, size);
        }
    }
    None
}
