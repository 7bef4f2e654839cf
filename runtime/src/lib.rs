//! The Ogham runtime: values, `.npy` and textual value I/O, and the executors of compiled
//! programs. The reference interpreter (`interp`) defines the language's semantics; the CPU and
//! CUDA executors come with their issues and must agree with it.

pub mod boundary;
pub mod cpu;
#[cfg(feature = "cuda")]
pub mod cuda;
pub mod interp;
pub mod ireval;
mod kernel_io;
pub mod library;
pub mod npy;
pub mod text;
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
/// `$XDG_CACHE_HOME/ogham`, else `~/.cache/ogham`; then `sub`.
pub fn cache_dir(sub: &str) -> Option<std::path::PathBuf> {
    let base = std::env::var_os("OGHAM_CACHE_DIR")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var_os("XDG_CACHE_HOME").map(|d| std::path::Path::new(&d).join("ogham"))
        })
        .or_else(|| {
            std::env::var_os("HOME").map(|d| std::path::Path::new(&d).join(".cache/ogham"))
        })?;
    Some(base.join(sub))
}

/// FNV-1a, 64 bits: a hash that is the same in every build (cache keys, fingerprints).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100000001b3)
    })
}
