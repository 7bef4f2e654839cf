//! NVRTC: CUDA C source to a CUBIN for one GPU architecture (`sm_80`, `sm_90`, ...), with the
//! compiler's log (ptxas's report of each kernel's registers). The library is
//! loaded at run time (`libnvrtc.so.12`, found through `LD_LIBRARY_PATH`); without it
//! [`available`] is false and nothing here may be called (cudarc panics on a missing library).
//!
//! Options ([`OPTIONS`]): C++17; no contraction of `a * b + c` into one fused multiply-add
//! (`--fmad=false`: NVRTC fuses by default, which rounds once instead of twice and made BFAST's
//! outputs on an H200 differ from the CPU backends' and the interpreter's); and the warnings about
//! unused variables silenced (generated kernels declare every output and arena even when a body
//! does not use them). ptxas reports each kernel's registers, shared memory and spills
//! (`--ptxas-options=-v`); a register cap is the caller's (`registers.rs`). The options are
//! part of the CUBIN cache key and of the model's ptxas report's.

use cudarc::nvrtc::{result, sys};
use std::ffi::{CStr, CString};

/// Whether the NVRTC library can be loaded.
pub fn available() -> bool {
    // SAFETY: only tries to open the library.
    unsafe { sys::is_culib_present() }
}

/// A compiled translation unit.
pub struct Compiled {
    /// The CUBIN image.
    pub cubin: Vec<u8>,
    /// NVRTC's log, with ptxas's report per kernel.
    pub log: String,
}

/// The NVRTC version, e.g. `(12, 9)`.
pub fn version() -> Result<(i32, i32), String> {
    let (mut major, mut minor) = (0, 0);
    // SAFETY: NVRTC is loaded (callers check `available`); the pointers are valid.
    unsafe { sys::nvrtcVersion(&mut major, &mut minor) }
        .result()
        .map_err(|e| format!("{e:?}"))?;
    Ok((major, minor))
}

/// The options of every compilation besides the architecture (and ptxas's report).
pub const OPTIONS: [&str; 3] = ["--std=c++17", "--fmad=false", "-diag-suppress=177,550"];

/// Compiles `source` for architecture `arch` (`sm_90`) with ptxas's report in the log, at most
/// `cap` registers per thread when there is one. The error is NVRTC's log.
pub fn compile(source: &str, arch: &str, cap: Option<u32>) -> Result<Compiled, String> {
    let src = CString::new(source).map_err(|_| "the source contains a NUL byte".to_string())?;
    let name = CString::new("ogham.cu").expect("no NUL");
    let all: Vec<String> = std::iter::once(format!("--gpu-architecture={arch}"))
        .chain(OPTIONS.iter().map(|o| o.to_string()))
        .chain(std::iter::once("--ptxas-options=-v".to_string()))
        .chain(cap.map(|n| format!("--maxrregcount={n}")))
        .collect();
    let prog = result::create_program(&src, Some(&name)).map_err(|e| format!("{e:?}"))?;
    // SAFETY: `prog` was created above and is destroyed once below.
    let compiled = unsafe { result::compile_program(prog, &all) };
    let log = unsafe { result::get_program_log(prog) }
        .map(|raw| {
            // SAFETY: NVRTC returns a NUL-terminated log.
            unsafe { CStr::from_ptr(raw.as_ptr()) }
                .to_string_lossy()
                .into_owned()
        })
        .unwrap_or_default();
    let out = match compiled {
        Err(e) => Err(format!("NVRTC failed ({e:?}):\n{log}")),
        Ok(()) => cubin(prog).map(|cubin| Compiled { cubin, log }),
    };
    // SAFETY: created above, not used afterwards.
    let _ = unsafe { result::destroy_program(prog) };
    out
}

fn cubin(prog: sys::nvrtcProgram) -> Result<Vec<u8>, String> {
    let mut size = 0usize;
    // SAFETY: `prog` compiled successfully; the buffer has the size NVRTC reported.
    unsafe {
        sys::nvrtcGetCUBINSize(prog, &mut size)
            .result()
            .map_err(|e| format!("{e:?}"))?;
        let mut image = vec![0u8; size];
        sys::nvrtcGetCUBIN(prog, image.as_mut_ptr().cast())
            .result()
            .map_err(|e| format!("{e:?}"))?;
        Ok(image)
    }
}
