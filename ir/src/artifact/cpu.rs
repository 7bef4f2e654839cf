//! The CPU backend's artefacts, as the compiler's Cranelift backend (`ogham_compiler::back::cpu`)
//! makes them and the runtime's CPU executor (`ogham_runtime::cpu`) runs them: what the executor
//! needs to launch a kernel besides its code ([`KernelInfo`]), kernels JIT-compiled into this
//! process ([`JitCode`]), an entry point's kernels as a relocatable object for the disk cache
//! ([`NativeCode`]), and the fields of an ahead-of-time object's image record that the runtime
//! gives the backend to write ([`ImageData`], at the offsets `IMAGE_*_AT`).
//!
//! Invariants: the machine code follows the calling convention of `ogham_compiler::back::cpu`;
//! a [`JitCode`]'s addresses stay valid for as long as its `memory` lives; every list of
//! kernels is in the order of the entry point's (or program's) kernel statements
//! (`crate::abi::kernels`), `None` where no kernel was generated (the executor evaluates it).

use crate::VarId;
use crate::abi::ErrorSite;
use serde::{Deserialize, Serialize};

/// What the executor needs to know of a compiled kernel besides its code: its name, the
/// variables of its argument slots and its checks. Serializable: loaded code (the disk cache's
/// native code, ahead-of-time objects) carries it as JSON, so it need not be generated again.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct KernelInfo {
    /// `<entry>_k<n>`; also the symbol of its function in object files (`<name>_combine` for
    /// its combine function).
    pub name: String,
    /// The variables passed in the argument slots, in order.
    pub inputs: Vec<VarId>,
    /// The checks of the kernel then of its combine function, by number.
    pub sites: Vec<ErrorSite>,
}

/// A kernel JIT-compiled into this process: its description and the addresses of its
/// functions.
pub struct JitKernel {
    pub info: KernelInfo,
    /// The kernel function.
    pub kernel: *const u8,
    /// The combine function of a reduction or scan; null where there is none.
    pub combine: *const u8,
}

/// The kernels of one entry point JIT-compiled into this process, in statement order, and the
/// owner of their machine code, which frees it when dropped.
pub struct JitCode {
    pub kernels: Vec<Option<JitKernel>>,
    pub memory: Box<dyn Send + Sync>,
}

/// The kernels of one entry point as native code that outlives the process: a relocatable ELF
/// object defining `<name>` and `<name>_combine` for each kernel (local symbols; imports: the
/// runtime's helpers `ogham_*` and the C library functions Cranelift calls), and the
/// kernels' descriptions in statement order.
pub struct NativeCode {
    pub object: Vec<u8>,
    pub kernels: Vec<Option<KernelInfo>>,
}

/// The values of an ahead-of-time object's image record (`ogham_image` in
/// `capi/include/ogham.h`) that the runtime decides: its format version, the build id of the
/// runtime that is to run it, and the library packed. The backend fills the other fields
/// (the CPU features, the kernel count and the kernel table) and writes the pointers as
/// relocations.
pub struct ImageData {
    pub version: u64,
    pub build: u64,
    pub library: Vec<u8>,
}

/// How the runtime gives an ahead-of-time object's [`ImageData`]: from the descriptions of all
/// the program's kernel statements, in order (the runtime packs them with the library).
pub type MakeImage<'a> = dyn FnMut(&[Option<KernelInfo>]) -> Result<ImageData, String> + 'a;

/// The image record's layout (C, 64-bit little-endian): the offsets of its fields and its size.
pub const IMAGE_VERSION_AT: usize = 0;
pub const IMAGE_BUILD_AT: usize = 8;
pub const IMAGE_LIBRARY_AT: usize = 16;
pub const IMAGE_LIBRARY_LEN_AT: usize = 24;
pub const IMAGE_FEATURES_AT: usize = 32;
pub const IMAGE_COUNT_AT: usize = 40;
pub const IMAGE_KERNELS_AT: usize = 48;
pub const IMAGE_SIZE: usize = 56;
