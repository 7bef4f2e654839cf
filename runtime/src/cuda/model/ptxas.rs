//! The registers and static shared memory of each kernel, from ptxas's report: NVRTC compiles
//! each unit (`CudaProgram::units`, in parallel: `units.rs`) for the modelled GPU's
//! architecture with `--ptxas-options=-v` (no GPU needed). Each unit's report is cached (`<cache>/cuda-model/`, keyed by the source, NVRTC's options, the architecture and NVRTC
//! version, with its MAC like every artefact there): NVRTC takes tens of seconds on a large unit. Without NVRTC every kernel is
//! assumed to take [`ASSUMED_REGISTERS`], and the profile says so.

use crate::cache_file::Store;
use crate::cuda::nvrtc;
use std::collections::HashMap;

/// Registers per thread assumed without ptxas's report.
pub const ASSUMED_REGISTERS: i64 = 64;

/// A kernel's resources.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resources {
    pub registers: i64,
    pub shared: i64,
}

/// Defines the counters of counted code as identities for NVRTC, which compiles the model's
/// source for the report only.
const IDENTITIES: &str = "template <class T> __device__ __forceinline__ T og_flop(T x) { return x; }\n\
template <class T> __device__ __forceinline__ T og_special(T x) { return x; }\n";

/// The resources of every kernel of `source` on `arch`, or why there is no report.
pub fn report(source: &str, arch: &str) -> Result<HashMap<String, Resources>, String> {
    if !nvrtc::available() {
        return Err("NVRTC was not found".into());
    }
    let (major, minor) = nvrtc::version()?;
    let unit = format!("{IDENTITIES}{source}");
    let options = nvrtc::options()?.join(" ");
    let name = format!(
        "{:016x}-{:08x}-{arch}-nvrtc{major}.{minor}.ptxas",
        crate::fnv1a(unit.as_bytes()),
        crate::fnv1a(options.as_bytes()) as u32
    );
    let store = Store::open("cuda-model");
    if let Some(text) = store.as_ref().and_then(|s| s.load_artefact(&name)) {
        return Ok(parse(&String::from_utf8_lossy(&text)));
    }
    let compiled = nvrtc::compile(&unit, arch, true)?;
    if let Some(store) = store {
        // A cache that cannot be written only costs the next run the compilation.
        let _ = store.store_artefact(&name, compiled.log.as_bytes());
    }
    Ok(parse(&compiled.log))
}

/// The kernels' resources in ptxas's verbose log: `Compiling entry function 'NAME'` followed
/// by `Used N registers, ... M bytes smem, ...`.
pub fn parse(log: &str) -> HashMap<String, Resources> {
    let mut out = HashMap::new();
    let mut current: Option<String> = None;
    for line in log.lines() {
        if let Some(rest) = line.split("entry function '").nth(1) {
            current = rest.split('\'').next().map(str::to_string);
        } else if let (Some(name), Some(used)) = (&current, line.split("Used ").nth(1)) {
            let number_before = |unit: &str| {
                used.split(',')
                    .find_map(|part| {
                        part.trim()
                            .strip_suffix(unit)?
                            .trim()
                            .rsplit(' ')
                            .next()?
                            .parse()
                            .ok()
                    })
                    .unwrap_or(0)
            };
            out.insert(
                name.clone(),
                Resources {
                    registers: number_before("registers"),
                    shared: number_before("bytes smem"),
                },
            );
            current = None;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptxas_reports_are_read() {
        let log = "ptxas info    : 0 bytes gmem\n\
ptxas info    : Compiling entry function 'main_k0' for 'sm_90'\n\
ptxas info    : Function properties for main_k0\n\
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
ptxas info    : Used 40 registers, used 1 barriers, 2048 bytes smem, 400 bytes cmem[0]\n\
ptxas info    : Compiling entry function 'main_k1' for 'sm_90'\n\
ptxas info    : Used 18 registers, 384 bytes cmem[0]\n";
        let r = parse(log);
        assert_eq!(
            r["main_k0"],
            Resources {
                registers: 40,
                shared: 2048
            }
        );
        assert_eq!(
            r["main_k1"],
            Resources {
                registers: 18,
                shared: 0
            }
        );
    }
}
