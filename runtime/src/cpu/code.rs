//! The machine code of compiled kernels as the executor calls it, whoever made it (the JIT,
//! the disk cache's loader or an ahead-of-time object): the signatures of a kernel's functions
//! (the calling convention of `ogham_compiler::back::cpu`) and the CPU features code may use.
//! Needs no code generator: a runtime built without the `jit` feature runs ahead-of-time objects
//! with it.

use super::helpers;

/// `kernel(ctx, args, seg_start, seg_end, i_start, i_end, partial, carry) -> status`.
pub type KernelFn = unsafe extern "C" fn(
    *mut helpers::Ctx,
    *const u64,
    i64,
    i64,
    i64,
    i64,
    *mut u64,
    *const u64,
) -> i32;
/// `combine(ctx, args, acc, val) -> status`.
pub type CombineFn =
    unsafe extern "C" fn(*mut helpers::Ctx, *const u64, *mut u64, *const u64) -> i32;

/// A kernel's entry points.
#[derive(Clone, Copy)]
pub struct Entry {
    pub kernel: KernelFn,
    pub combine: Option<CombineFn>,
}

impl Entry {
    /// The entry points at `kernel` and `combine` (null: none).
    ///
    /// # Safety
    /// `kernel` and a non-null `combine` are the machine code of a kernel's functions generated
    /// by `ogham_compiler::back::cpu` (whose signatures are [`KernelFn`] and [`CombineFn`]),
    /// valid for as long as the entry is used.
    pub unsafe fn from_code(kernel: *const u8, combine: *const u8) -> Entry {
        // SAFETY: the caller's contract.
        unsafe {
            Entry {
                kernel: std::mem::transmute::<*const u8, KernelFn>(kernel),
                combine: (!combine.is_null())
                    .then(|| std::mem::transmute::<*const u8, CombineFn>(combine)),
            }
        }
    }
}

/// The names of this machine's CPU features that generated code may use, as Cranelift names
/// them (`has_avx2`, ...): those `cranelift_native` enables for the host (an ahead-of-time
/// object records the features of the machine that built it; a test checks that both lists
/// agree). Architectures other than x86-64 and AArch64 report none.
pub fn host_cpu_features() -> Result<&'static [String], String> {
    static FEATURES: std::sync::OnceLock<Result<Vec<String>, String>> = std::sync::OnceLock::new();
    FEATURES
        .get_or_init(detect_cpu_features)
        .as_deref()
        .map_err(Clone::clone)
}

#[cfg(target_arch = "x86_64")]
fn detect_cpu_features() -> Result<Vec<String>, String> {
    if !std::is_x86_feature_detected!("sse2") {
        return Err("host CPU: x86 support requires SSE2".to_string());
    }
    let mut features = Vec::new();
    macro_rules! detect {
        ($($feature:tt => $name:literal),* $(,)?) => {
            $(if std::is_x86_feature_detected!($feature) {
                features.push($name.to_string());
            })*
        };
    }
    detect! {
        "cmpxchg16b" => "has_cmpxchg16b",
        "sse3" => "has_sse3",
        "ssse3" => "has_ssse3",
        "sse4.1" => "has_sse41",
        "sse4.2" => "has_sse42",
        "popcnt" => "has_popcnt",
        "avx" => "has_avx",
        "avx2" => "has_avx2",
        "fma" => "has_fma",
        "avxvnni" => "has_avx_vnni",
        "avx512vnni" => "has_avx512vnni",
        "bmi1" => "has_bmi1",
        "bmi2" => "has_bmi2",
        "avx512bitalg" => "has_avx512bitalg",
        "avx512dq" => "has_avx512dq",
        "avx512f" => "has_avx512f",
        "avx512vl" => "has_avx512vl",
        "avx512vbmi" => "has_avx512vbmi",
        "lzcnt" => "has_lzcnt",
    }
    Ok(features)
}

#[cfg(target_arch = "aarch64")]
fn detect_cpu_features() -> Result<Vec<String>, String> {
    let mut features = Vec::new();
    macro_rules! detect {
        ($($feature:tt => $name:literal),* $(,)?) => {
            $(if std::arch::is_aarch64_feature_detected!($feature) {
                features.push($name.to_string());
            })*
        };
    }
    detect! {
        "lse" => "has_lse",
        "paca" => "has_pauth",
        "fp16" => "has_fp16",
        "dotprod" => "has_dotprod",
        "i8mm" => "has_i8mm",
    }
    if cfg!(target_os = "macos") {
        features.extend(["sign_return_address", "sign_return_address_with_bkey"].map(String::from));
    }
    Ok(features)
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn detect_cpu_features() -> Result<Vec<String>, String> {
    Ok(Vec::new())
}
