//! The Ogham runtime: values, `.npy` and textual value I/O, and the executors of compiled
//! programs, in layers:
//!
//! - **base**, which knows nothing of the AST: `value` (values crossing the boundary), `val`
//!   (values executors compute with), `index`, `scalar` (the IR's one definition of scalar
//!   operations, `ogham_ir::scalar`), `error` (run-time error codes), `memory`,
//!   `buffer`, `boundary`, `npy`, `text`, `trace`, `stack`;
//! - **executors of compiled code**, on the IR and the base: `ireval` (core and kernel IR),
//!   `cpu` (kernels JIT-compiled by a code generator it is given, `cpu::CpuCodegen`; native
//!   code for the disk cache and ahead-of-time objects, which it loads), `cuda`, `kernel_io`
//!   (shared by both);
//! - **compiled libraries**: `library` (`.ogl` files and ahead-of-time images), `packed` (the
//!   lazy per-entry layout of images and of `ogham`'s disk cache), `cache_file`.
//!
//! The reference interpreter, the definition of the language's semantics, is the `ogham-interp`
//! crate, built on this base layer: `val`, `index`, and the parts of `error`, `boundary`,
//! `memory` and `trace` that executors use to report errors and traces are public for it (and
//! documented as such). The runtime does not know the interpreter or the AST.
//!
//! The IR is the `ogham-ir` crate's; the runtime never depends on the compiler. Code generation
//! is handed in by the caller (the `ogham` crate wires the compiler's backends): the default
//! feature `jit` runs programs whose kernels a `cpu::CpuCodegen` compiles (`.ogl` libraries, the
//! disk cache's native code; it needs the `object` crate only), the default feature `cuda` runs
//! kernels whose CUDA C a `cuda::CudaCodegen` writes, and both read only the artefacts of
//! `ogham_ir::artifact`. Without these features the runtime runs ahead-of-time objects.
//!
//! `tests/layering.rs` checks that no runtime code names the compiler or Cranelift, that the
//! manifest has no dependency on the compiler, and what each build links. The IR evaluator and
//! the CPU and CUDA executors must agree with the interpreter.

pub mod boundary;
pub mod buffer;
pub mod cache_file;
pub mod cpu;
#[cfg(feature = "cuda")]
pub mod cuda;
pub mod error;
pub mod index;
pub mod ireval;
mod kernel_io;
pub mod library;
pub mod memory;
pub mod npy;
pub mod scalar;
pub mod stack;
pub mod text;
pub mod trace;
pub mod val;
pub mod value;

pub use value::{Array, ArrayData, Scalar, Value};

/// The build id of this compiler and runtime (see `build.rs`): compiled code is reused only by
/// the build that made it.
pub const BUILD_ID: &str = env!("OGHAM_BUILD_ID");

/// [`BUILD_ID`] as a number.
pub fn build_id() -> u64 {
    u64::from_str_radix(BUILD_ID, 16).expect("build.rs writes 16 hex digits")
}

/// Where Ogham keeps compiled code between runs: `$OGHAM_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/ogham`, else `$HOME/.cache/ogham`. As the XDG base directory rules say, a
/// variable that is empty or holds a relative path counts as unset (a relative path would put
/// the cache in whatever directory a run starts in); `None` when none is usable. The directory
/// is used only after [`cache_file::Store::open`]'s checks.
pub fn cache_root() -> Option<std::path::PathBuf> {
    let absolute = |name: &str| {
        std::env::var_os(name)
            .map(std::path::PathBuf::from)
            .filter(|path| path.is_absolute())
    };
    absolute("OGHAM_CACHE_DIR")
        .or_else(|| absolute("XDG_CACHE_HOME").map(|d| d.join("ogham")))
        .or_else(|| absolute("HOME").map(|d| d.join(".cache/ogham")))
}

/// Makes a write past the file size limit (`ulimit -f`) fail with `EFBIG`, which the writer
/// reports as an error naming the file, instead of killing the process with `SIGXFSZ`, which
/// would leave partial temporary files behind (Python ignores the signal the same way). For
/// programs (the CLI) to call first; it changes the disposition for the whole process.
pub fn report_file_size_limit() {
    // SAFETY: setting a signal's disposition to "ignore" has no preconditions.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
}

/// A hash of `bytes` for checking that stored data is intact (cache files, ahead-of-time
/// images): FNV-1a over little-endian 64-bit words (the last one zero-padded), then the length.
/// Eight times fewer steps than [`fnv1a`]; as every step is a bijection of the running hash,
/// data that differs in one word always hashes differently.
pub fn content_hash(bytes: &[u8]) -> u64 {
    let mut chunks = bytes.chunks_exact(8);
    let mut h: u64 = 0xcbf29ce484222325;
    for chunk in &mut chunks {
        let word = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        h = (h ^ word).wrapping_mul(0x100000001b3);
    }
    let mut last = [0u8; 8];
    last[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    h = (h ^ u64::from_le_bytes(last)).wrapping_mul(0x100000001b3);
    (h ^ bytes.len() as u64).wrapping_mul(0x100000001b3)
}

/// FNV-1a, 64 bits: a hash that is the same in every build (cache keys, fingerprints).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100000001b3)
    })
}
