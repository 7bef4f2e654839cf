//! The CUDA emulator (`--backend cuda-emu`): the CUDA backend's translation unit compiled for
//! the host by `g++` with `emulate.hpp` (every GPU thread an OS thread, blocks one after
//! another, `__syncthreads` a barrier), loaded as a shared library and launched with the same
//! plans, argument slots, arenas and failure records as on a GPU. It tests the generated code
//! and the executor's launch logic on machines without a GPU (CI); it is not fast.
//!
//! Shared libraries are cached like CUBINs (`<cache>/cuda-emu/<hash>.so`, verified by its
//! MAC file before use and compiled again when damaged or when it does not load; see
//! [`crate::cache_file`]); without a usable cache they are made in a private temporary
//! directory of the process. Blocks have 4 threads (block-level kernels: whole warps, up to 64),
//! so block-level code really runs in parallel and its barriers matter.

use super::{Device, Res, machine_error};
use crate::cache_file::Store;
use crate::error::{R_CUDA, R_CUDA_UNAVAILABLE};
use ogham_ir::artifact::cuda::CudaProgram;
use std::alloc::Layout;
use std::collections::HashMap;
use std::io::Write;
use std::sync::{Mutex, OnceLock};

const EMULATE: &str = include_str!("emulate.hpp");

/// Memory the emulator offers to arenas.
const MEMORY: usize = 1 << 30;

type Emulate = unsafe extern "C" fn(u64, u32, u32, *const u64);

pub struct Emulator {
    library: Option<libloading::Library>,
    emulate: Option<Emulate>,
    /// The kernels' trampolines, by kernel name.
    functions: HashMap<String, u64>,
    /// Live allocations and their layouts.
    allocations: Mutex<HashMap<u64, Layout>>,
}

/// Why the emulator cannot run here (no `g++` with C++20), or `None`.
pub fn unavailable() -> Option<String> {
    static WHY: OnceLock<Option<String>> = OnceLock::new();
    WHY.get_or_init(
        || match std::process::Command::new("g++").arg("--version").output() {
            Ok(out) if out.status.success() => None,
            _ => Some("`g++` (C++20) was not found: the CUDA emulator compiles with it".into()),
        },
    )
    .clone()
}

impl Emulator {
    pub fn new() -> Res<Emulator> {
        if let Some(why) = unavailable() {
            return Err(machine_error(R_CUDA_UNAVAILABLE, why));
        }
        Ok(Emulator {
            library: None,
            emulate: None,
            functions: HashMap::new(),
            allocations: Mutex::new(HashMap::new()),
        })
    }
}

/// How a translation unit becomes a shared library: the cache directory it is kept in and
/// `g++`'s options besides the common ones (the emulator's, or the performance model's
/// instrumentation).
pub(super) struct Build {
    pub cache: &'static str,
    pub options: &'static [&'static str],
}

/// The emulator's build: no optimisation (the units are large and run briefly).
const EMULATOR: Build = Build {
    cache: "cuda-emu",
    options: &["-O0"],
};

/// The shared library of `source`: the store and entry name it is kept under, from the cache
/// when the entry there is intact (see [`crate::cache_file`]), otherwise compiled with `g++` and
/// stored.
fn shared_library(source: &str, build: &Build) -> Res<(Store, String)> {
    let fail = |what: String| machine_error(R_CUDA, format!("CUDA emulator: {what}"));
    let store = match Store::open(build.cache) {
        Some(store) => store,
        None => Store::private_temporary(&format!("ogham-{}", build.cache)).map_err(fail)?,
    };
    // The options are part of the key: the same unit built otherwise is another library.
    let key = format!("{}\n{source}", build.options.join(" "));
    let name = format!("{:016x}.so", crate::fnv1a(key.as_bytes()));
    if store.load_artefact(&name).is_some() {
        return Ok((store, name));
    }
    // Fresh files with random names: concurrent runs of the same program may race here.
    let create = |extension| {
        store
            .create_temporary(&name, extension)
            .map_err(|e| fail(format!("{}: {e}", store.dir().display())))
    };
    let (cpp, mut file) = create("cpp")?;
    let (so, _) = create("so")?;
    let out = file
        .write_all(source.as_bytes())
        .map_err(|e| fail(format!("{}: {e}", cpp.display())))
        .and_then(|()| {
            std::process::Command::new("g++")
                .args(["-std=c++20", "-shared", "-fPIC", "-pthread", "-w"])
                .args(build.options)
                .arg("-o")
                .arg(&so)
                .arg(&cpp)
                .output()
                .map_err(|e| fail(format!("running g++: {e}")))
        });
    let _ = std::fs::remove_file(&cpp);
    let library = out.and_then(|out| {
        if !out.status.success() {
            return Err(fail(format!(
                "g++ failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
                    .lines()
                    .take(30)
                    .collect::<Vec<_>>()
                    .join("\n")
            )));
        }
        std::fs::read(&so).map_err(|e| fail(format!("{}: {e}", so.display())))
    });
    let _ = std::fs::remove_file(&so);
    store
        .store_artefact(&name, &library?)
        .map_err(|e| fail(format!("{}: {e}", store.path(&name).display())))?;
    Ok((store, name))
}

/// Opens the shared library of `source`. A cached library that passes its MAC but does not
/// load is removed and compiled once more; when that fails too, the error names the file.
pub(super) fn open_library(source: &str, build: &Build) -> Res<libloading::Library> {
    let (mut store, mut name) = shared_library(source, build)?;
    let mut retried = false;
    loop {
        let path = store.path(&name);
        // SAFETY: the library is ours (its MAC matched in a directory only this user can
        // write): its initialisers only set up the emulator's globals.
        match unsafe { libloading::Library::new(&path) } {
            Ok(library) => return Ok(library),
            Err(e) if retried => {
                return Err(machine_error(
                    R_CUDA,
                    format!("CUDA emulator: cannot load {}: {e}", path.display()),
                ));
            }
            Err(e) => {
                store.damaged(&name, &format!("it does not load: {e}"));
                (store, name) = shared_library(source, build)?;
                retried = true;
            }
        }
    }
}

/// The translation unit the emulator (or, with `instrumentation`, the model) compiles: the
/// emulation header, the instrumentation (empty, or text ending in a newline), the kernels, and a trampoline `og_call_<name>` per
/// kernel that calls it with its parameters.
pub(super) fn unit(source: &str, instrumentation: &str, names: &[String]) -> String {
    let mut unit = format!("{EMULATE}\n{instrumentation}{source}\n");
    for name in names {
        unit.push_str(&format!(
            "extern \"C\" void og_call_{name}(const og_u64* p) {{ og_call({name}, p); }}\n"
        ));
    }
    unit
}

pub(super) fn symbol_error(e: libloading::Error) -> Box<ogham_ir::diag::Diagnostic> {
    machine_error(R_CUDA, format!("CUDA emulator: {e}"))
}

/// The addresses of the trampolines `og_call_<name>` of the kernels `names` in `library`.
pub(super) fn trampolines(
    library: &libloading::Library,
    names: &[String],
) -> Res<HashMap<String, u64>> {
    let mut functions = HashMap::new();
    for name in names {
        // SAFETY: the trampolines have this type (`unit`).
        let call: libloading::Symbol<unsafe extern "C" fn(*const u64)> =
            unsafe { library.get(format!("og_call_{name}").as_bytes()) }.map_err(symbol_error)?;
        functions.insert(name.clone(), *call as usize as u64);
    }
    Ok(functions)
}

impl Device for Emulator {
    fn name(&self) -> &'static str {
        "cuda-emu"
    }

    fn bind(&self) -> Res<()> {
        Ok(())
    }

    /// Few threads, each an OS thread.
    fn block_size(&self) -> i64 {
        4
    }

    /// Two warps, so that the tests run the steps of block-level reductions and scans that
    /// cross warps.
    fn block_level_size(&self) -> i64 {
        64
    }

    fn multiprocessors(&self) -> i64 {
        1
    }

    /// The whole program as one library (the host compiler's time is not NVRTC's).
    fn load(&mut self, program: &CudaProgram) -> Res<()> {
        let names = program.kernel_names();
        let library = open_library(&unit(&program.source(), "", &names), &EMULATOR)?;
        // SAFETY: the symbol has the type the emulation header declares.
        let emulate: libloading::Symbol<Emulate> =
            unsafe { library.get(b"og_emulate") }.map_err(symbol_error)?;
        self.emulate = Some(*emulate);
        self.functions = trampolines(&library, &names)?;
        self.library = Some(library);
        Ok(())
    }

    fn function(&self, name: &str) -> Res<u64> {
        super::loaded_kernel(&self.functions, name)
    }

    fn alloc(&self, bytes: usize) -> Res<u64> {
        let layout = Layout::from_size_align(bytes.max(1), 16)
            .map_err(|e| machine_error(R_CUDA, format!("allocation of {bytes} bytes: {e}")))?;
        // SAFETY: a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) } as u64;
        if ptr == 0 {
            return Err(machine_error(
                crate::error::R_OUT_OF_MEMORY,
                format!("out of memory: cannot allocate {bytes} bytes"),
            ));
        }
        self.allocations
            .lock()
            .expect("no panics while locked")
            .insert(ptr, layout);
        Ok(ptr)
    }

    fn free(&self, ptr: u64) {
        let layout = self
            .allocations
            .lock()
            .expect("no panics while locked")
            .remove(&ptr);
        if let Some(layout) = layout {
            // SAFETY: allocated by `alloc` with this layout, freed once.
            unsafe { std::alloc::dealloc(ptr as *mut u8, layout) };
        }
    }

    fn upload(&self, dst: u64, src: &[u8]) -> Res<()> {
        // SAFETY: `dst` is an allocation of at least `src.len()` bytes.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst as *mut u8, src.len()) };
        Ok(())
    }

    fn download(&self, dst: &mut [u8], src: u64) -> Res<()> {
        // SAFETY: `src` is an allocation of at least `dst.len()` bytes.
        unsafe { std::ptr::copy_nonoverlapping(src as *const u8, dst.as_mut_ptr(), dst.len()) };
        Ok(())
    }

    fn zero(&self, ptr: u64, bytes: usize) -> Res<()> {
        // SAFETY: `ptr` is an allocation of at least `bytes` bytes.
        unsafe { std::ptr::write_bytes(ptr as *mut u8, 0, bytes) };
        Ok(())
    }

    fn fill(&self, ptr: u64, pattern: &[u8], count: usize) -> Res<()> {
        host_fill(ptr, pattern, count);
        Ok(())
    }

    fn copy(&self, dst: u64, src: u64, bytes: usize) -> Res<()> {
        host_copy(dst, src, bytes);
        Ok(())
    }

    fn free_memory(&self) -> Res<usize> {
        Ok(MEMORY)
    }

    /// Synchronous whatever `wait` says (the host runs the kernel).
    fn launch(
        &self,
        function: u64,
        grid: u32,
        block: u32,
        _shared: u32,
        params: &mut [u64],
        _wait: bool,
    ) -> Res<f64> {
        let emulate = self
            .emulate
            .ok_or_else(|| machine_error(R_CUDA, "the emulator has no program loaded".into()))?;
        let start = std::time::Instant::now();
        // SAFETY: `function` is a trampoline of the loaded library; `params` hold the kernel's
        // parameters (device addresses are host allocations that outlive the call).
        unsafe { emulate(function, grid, block, params.as_ptr()) };
        Ok(start.elapsed().as_secs_f64())
    }
}

/// [`Device::fill`] of device memory that is host memory (the emulator's, the model's).
pub(super) fn host_fill(ptr: u64, pattern: &[u8], count: usize) {
    // SAFETY: `ptr` is an allocation of at least `count` times the pattern's bytes.
    let dst = unsafe { std::slice::from_raw_parts_mut(ptr as *mut u8, count * pattern.len()) };
    for chunk in dst.chunks_exact_mut(pattern.len()) {
        chunk.copy_from_slice(pattern);
    }
}

/// [`Device::copy`] of device memory that is host memory.
pub(super) fn host_copy(dst: u64, src: u64, bytes: usize) {
    // SAFETY: both are allocations of at least `bytes` bytes that do not overlap.
    unsafe { std::ptr::copy_nonoverlapping(src as *const u8, dst as *mut u8, bytes) };
}

impl Drop for Emulator {
    fn drop(&mut self) {
        let live: Vec<u64> = self
            .allocations
            .lock()
            .map(|a| a.keys().copied().collect())
            .unwrap_or_default();
        for ptr in live {
            self.free(ptr);
        }
    }
}
