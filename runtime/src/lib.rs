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
pub mod memory;
pub mod npy;
pub mod text;
pub mod value;

pub use value::{Array, ArrayData, Scalar, Value};

/// FNV-1a, 64 bits: a hash that is the same in every build (cache keys, fingerprints).
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100000001b3)
    })
}
