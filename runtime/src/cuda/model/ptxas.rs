//! The registers and static shared memory of each kernel, from ptxas's report: NVRTC compiles
//! each unit (`CudaProgram::units`, in parallel: `units.rs`) for the modelled GPU's
//! architecture, with the register cap a GPU of its SM would take (`registers.rs`; no GPU
//! needed). Each unit's report is cached (`<cache>/cuda-model/`, keyed by the source, NVRTC's
//! options, the cap policy and the SM it decided for, the architecture and NVRTC version, with
//! its MAC like every artefact there): NVRTC takes tens of seconds on a large unit. Without
//! NVRTC every kernel is assumed to take [`ASSUMED_REGISTERS`], and the profile says so.

use super::gpus::Gpu;
use crate::cache_file::Store;
use crate::cuda::nvrtc;
pub use crate::cuda::registers::Resources;
use crate::cuda::registers::{self, Policy, parse};
use ogham_ir::artifact::cuda::Unit;
use ogham_ir::kir::SegLevel;
use std::collections::HashMap;

/// Registers per thread assumed without ptxas's report.
pub const ASSUMED_REGISTERS: i64 = 64;

/// Defines the counters of counted code as identities for NVRTC, which compiles the model's
/// source for the report only.
const IDENTITIES: &str = "template <class T> __device__ __forceinline__ T og_flop(T x) { return x; }\n\
template <class T> __device__ __forceinline__ T og_special(T x) { return x; }\n";

/// The resources of every kernel of `unit` on `gpu`, compiled as the GPU would compile it
/// (with the register cap `registers.rs` chooses), or why there is no report.
pub fn report(unit: &Unit, gpu: &Gpu) -> Result<HashMap<String, Resources>, String> {
    if !nvrtc::available() {
        return Err("NVRTC was not found".into());
    }
    let (major, minor) = nvrtc::version()?;
    let arch = gpu.arch;
    let sm = gpu.sm();
    let policy = Policy::from_env()?;
    let thread_level = unit.level == Some(SegLevel::Thread);
    let source = format!("{IDENTITIES}{}", unit.source);
    let options = format!("{} {}", nvrtc::OPTIONS.join(" "), policy.key(&sm));
    let name = format!(
        "{:016x}-{:08x}-{arch}-nvrtc{major}.{minor}.ptxas",
        crate::fnv1a(source.as_bytes()),
        crate::fnv1a(options.as_bytes()) as u32
    );
    let store = Store::open("cuda-model");
    if let Some(text) = store.as_ref().and_then(|s| s.load_artefact(&name)) {
        return Ok(parse(&String::from_utf8_lossy(&text)));
    }
    let compiled = registers::compile(&source, arch, &sm, thread_level, policy)?;
    if let Some(store) = store {
        // A cache that cannot be written only costs the next run the compilation.
        let _ = store.store_artefact(&name, compiled.log.as_bytes());
    }
    Ok(parse(&compiled.log))
}
