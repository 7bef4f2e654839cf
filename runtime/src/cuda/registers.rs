//! Compiling a unit (`CudaProgram::units`) with the register cap that lets an SM hold more of
//! its thread-level kernel's warps without spilling, and reading ptxas's report of what each
//! kernel takes. The GPU (`driver.rs`) and the performance model (`model/ptxas.rs`) both compile
//! through [`compile`], so the model sees the registers the GPU runs with.
//!
//! The cost rule (`OGHAM_CUDA_MAX_REGISTERS` unset or `auto`, [`Policy::Auto`]):
//!
//! - Only a unit of a thread-level kernel is capped. Its block size is the runtime's to choose
//!   (`fullest_block` in `device.rs`: 256 threads or a power of two down to a warp) and it uses
//!   no dynamic shared memory, so its registers alone decide how many of its warps an SM holds.
//!   A block-level kernel's blocks and shared memory are sized at launch; it is not capped.
//! - A kernel that an SM already holds a quarter of its most warps of (16 of 64 on an H100,
//!   8 of 32 on a Turing GPU) is left as ptxas compiles it: latency is then hidden well enough
//!   that fewer registers would cost more instructions than the warps gain.
//! - Otherwise each number of warps from one more up to that quarter has a cap: the most
//!   registers (in ptxas's units of 8) at which an SM holds that many. The unit is compiled
//!   again at those caps, by bisection (at most four more compilations), and the lowest cap
//!   at which no kernel of the unit spills more than without a cap is kept. Spilling grows as
//!   the cap falls, so the bisection finds the most warps that cost no local memory.
//!
//! Registers change neither the instructions' order nor their rounding: the outputs are those
//! of the uncapped code. `OGHAM_CUDA_MAX_REGISTERS=N` caps every unit at N registers instead
//! (an experiment: spills to local memory are then allowed), and `off` leaves every unit as
//! ptxas compiles it.

use super::device::fullest_block;
use crate::cuda::nvrtc::{self, Compiled};
use std::collections::HashMap;

/// A kernel's resources, from ptxas's report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resources {
    pub registers: i64,
    /// Static shared memory per block, bytes.
    pub shared: i64,
    /// Bytes of spill stores and spill loads per thread, together.
    pub spilled: i64,
    /// The register cap the kernel's unit was compiled with, if any.
    pub cap: Option<u32>,
}

/// The most threads of a thread-level kernel's block (`Device::block_size` on a GPU and in
/// the model).
const THREAD_BLOCK: i64 = 256;

/// The line [`compile`] puts before a capped compilation's log, so that a report read back from
/// a cache says what the cap was.
const CAP_LINE: &str = "ogham: register cap ";

/// What an SM holds: registers, threads and blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sm {
    pub registers: i64,
    pub threads: i64,
    pub blocks: i64,
}

/// How units are capped (`OGHAM_CUDA_MAX_REGISTERS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// The module header's cost rule (unset, empty or `auto`).
    Auto,
    /// Every unit at this many registers per thread (16 to 255, ptxas's range).
    Every(u32),
    /// No cap (`off`).
    Off,
}

impl Policy {
    /// The policy `OGHAM_CUDA_MAX_REGISTERS` asks for.
    pub fn from_env() -> Result<Policy, String> {
        Policy::parse(std::env::var("OGHAM_CUDA_MAX_REGISTERS").ok().as_deref())
    }

    fn parse(text: Option<&str>) -> Result<Policy, String> {
        match text.map(str::trim) {
            None | Some("") | Some("auto") => Ok(Policy::Auto),
            Some("off") => Ok(Policy::Off),
            Some(t) => match t.parse::<u32>() {
                Ok(n) if (16..=255).contains(&n) => Ok(Policy::Every(n)),
                _ => Err(format!(
                    "OGHAM_CUDA_MAX_REGISTERS must be `auto`, `off` or a number of registers \
                     from 16 to 255, not `{t}`"
                )),
            },
        }
    }

    /// What a cached compilation depends on besides the source, NVRTC's options and the
    /// architecture: the policy and, under [`Policy::Auto`], the SM it was decided for.
    pub fn key(self, sm: &Sm) -> String {
        match self {
            Policy::Auto => format!("auto:{}/{}/{}", sm.registers, sm.threads, sm.blocks),
            Policy::Every(n) => format!("--maxrregcount={n}"),
            Policy::Off => "off".into(),
        }
    }
}

/// Blocks of `warps_per_block` warps of `registers` registers per thread that an SM's
/// `registers_per_sm` registers hold (allocated per warp in units of 256).
pub fn blocks_by_registers(registers_per_sm: i64, registers: i64, warps_per_block: i64) -> i64 {
    let per_warp = (registers.max(1) * 32 + 255) / 256 * 256;
    registers_per_sm / (per_warp * warps_per_block.max(1))
}

impl Sm {
    /// The warps of a thread-level kernel of `registers` registers per thread that the SM
    /// holds in the blocks [`fullest_block`] chooses, as the runtime launches it.
    fn thread_level_warps(&self, registers: i64) -> i64 {
        let Ok(block) = fullest_block(THREAD_BLOCK, |size| {
            let warps_per_block = (size + 31) / 32;
            Ok::<_, std::convert::Infallible>(
                blocks_by_registers(self.registers, registers, warps_per_block)
                    .min(self.blocks)
                    .min(self.threads / size),
            )
        });
        block.per_sm * block.threads / 32
    }

    /// The caps worth trying for a thread-level kernel of `registers` registers per thread, by
    /// the module header's rule: for each number of warps from one more than it holds to a
    /// quarter of the SM's, the most registers at which the SM holds that many (fewer warps
    /// first, no cap twice).
    fn caps(&self, registers: i64) -> Vec<u32> {
        let quarter = self.threads / 32 / 4;
        let mut caps: Vec<u32> = Vec::new();
        for warps in self.thread_level_warps(registers) + 1..=quarter {
            let most = (self.registers / (32 * warps) / 8 * 8).min(255);
            if most < registers
                && most >= 16
                && self.thread_level_warps(most) >= warps
                && caps.last() != Some(&(most as u32))
            {
                caps.push(most as u32);
            }
        }
        caps
    }
}

/// Compiles `source` for `arch` with ptxas's report, capped by `policy` (the module header).
/// `thread_level`: the unit defines a thread-level kernel. A capped compilation's log starts
/// with a line naming the cap, which [`parse`] reads.
pub fn compile(
    source: &str,
    arch: &str,
    sm: &Sm,
    thread_level: bool,
    policy: Policy,
) -> Result<Compiled, String> {
    let (compiled, cap) = choose(source, arch, sm, thread_level, policy)?;
    Ok(match cap {
        Some(cap) => Compiled {
            log: format!("{CAP_LINE}{cap}\n{}", compiled.log),
            ..compiled
        },
        None => compiled,
    })
}

/// [`compile`]'s compilation and its cap, if any.
fn choose(
    source: &str,
    arch: &str,
    sm: &Sm,
    thread_level: bool,
    policy: Policy,
) -> Result<(Compiled, Option<u32>), String> {
    let fixed = match policy {
        Policy::Every(n) => Some(n),
        Policy::Auto | Policy::Off => None,
    };
    let uncapped = nvrtc::compile(source, arch, fixed)?;
    if policy != Policy::Auto || !thread_level {
        return Ok((uncapped, fixed));
    }
    let report = parse(&uncapped.log);
    let registers = report.values().map(|r| r.registers).max().unwrap_or(0);
    let caps = sm.caps(registers);
    // Bisection over the caps: `lo` the last known not to spill more (-1: no cap), `hi` the
    // first known to (`caps.len()`: none yet).
    let (mut lo, mut hi) = (-1i64, caps.len() as i64);
    let mut best = uncapped;
    let mut best_cap = None;
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        let cap = caps[mid as usize];
        // A cap NVRTC refuses counts as one that spills: the uncapped compilation stands.
        let kept = nvrtc::compile(source, arch, Some(cap))
            .ok()
            .filter(|capped| {
                parse(&capped.log)
                    .iter()
                    .all(|(name, r)| r.spilled <= report.get(name).map_or(0, |u| u.spilled))
            });
        match kept {
            Some(capped) => (lo, best, best_cap) = (mid, capped, Some(cap)),
            None => hi = mid,
        }
    }
    Ok((best, best_cap))
}

/// The kernels' resources in ptxas's verbose log: `Compiling entry function 'NAME'` followed
/// by `N bytes stack frame, S bytes spill stores, L bytes spill loads` and `Used N registers,
/// ... M bytes smem, ...`; the cap from [`compile`]'s first line, if any.
pub fn parse(log: &str) -> HashMap<String, Resources> {
    let mut out = HashMap::new();
    let mut current: Option<String> = None;
    let mut spilled = 0;
    let cap = log
        .lines()
        .next()
        .and_then(|l| l.strip_prefix(CAP_LINE))
        .and_then(|n| n.trim().parse().ok());
    for line in log.lines() {
        let number_before = |text: &str, unit: &str| -> i64 {
            text.split(',')
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
        if let Some(rest) = line.split("entry function '").nth(1) {
            current = rest.split('\'').next().map(str::to_string);
            spilled = 0;
        } else if current.is_some() && line.contains("bytes spill stores") {
            spilled = number_before(line, "bytes spill stores")
                + number_before(line, "bytes spill loads");
        } else if let (Some(name), Some(used)) = (&current, line.split("Used ").nth(1)) {
            out.insert(
                name.clone(),
                Resources {
                    registers: number_before(used, "registers"),
                    shared: number_before(used, "bytes smem"),
                    spilled,
                    cap,
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

    const H100: Sm = Sm {
        registers: 65536,
        threads: 2048,
        blocks: 32,
    };

    #[test]
    fn the_cap_policy_is_auto_off_or_a_number_of_registers() {
        assert_eq!(Policy::parse(None), Ok(Policy::Auto));
        assert_eq!(Policy::parse(Some("")), Ok(Policy::Auto));
        assert_eq!(Policy::parse(Some("auto")), Ok(Policy::Auto));
        assert_eq!(Policy::parse(Some("off")), Ok(Policy::Off));
        assert_eq!(Policy::parse(Some(" 128 ")), Ok(Policy::Every(128)));
        for bad in ["8", "256", "-1", "many"] {
            let e = Policy::parse(Some(bad)).expect_err(bad);
            assert!(
                e.contains("OGHAM_CUDA_MAX_REGISTERS") && e.contains(bad),
                "{e}"
            );
        }
        assert_ne!(Policy::Auto.key(&H100), Policy::Off.key(&H100));
    }

    #[test]
    fn the_caps_are_the_most_registers_for_each_more_warps_up_to_a_quarter_of_the_sm() {
        // 255 registers: 8 warps; 9 warps at 224, 10 at 200, ... 16 at 128.
        assert_eq!(H100.thread_level_warps(255), 8);
        assert_eq!(H100.caps(255), vec![224, 200, 184, 168, 152, 144, 136, 128]);
        // 178 registers (STL's loess): 11 warps in blocks of 32; 12 at 168.
        assert_eq!(H100.thread_level_warps(178), 11);
        assert_eq!(H100.caps(178)[0], 168);
        // At a quarter of the SM's warps or more: no cap.
        assert!(H100.caps(128).is_empty());
        assert!(H100.caps(40).is_empty());
        // A Turing SM (32 warps, 16 blocks): a quarter is 8 warps.
        let turing = Sm {
            registers: 65536,
            threads: 1024,
            blocks: 16,
        };
        assert_eq!(turing.thread_level_warps(255), 8);
        assert!(turing.caps(255).is_empty());
    }

    #[test]
    fn ptxas_reports_are_read() {
        let log = "ptxas info    : 0 bytes gmem\n\
ptxas info    : Compiling entry function 'main_k0' for 'sm_90'\n\
ptxas info    : Function properties for main_k0\n\
    0 bytes stack frame, 24 bytes spill stores, 44 bytes spill loads\n\
ptxas info    : Used 40 registers, used 1 barriers, 2048 bytes smem, 400 bytes cmem[0]\n\
ptxas info    : Function properties for og_fail\n\
    0 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads\n\
ptxas info    : Compiling entry function 'main_k1' for 'sm_90'\n\
ptxas info    : Used 18 registers, 384 bytes cmem[0]\n";
        let r = parse(log);
        assert_eq!(
            r["main_k0"],
            Resources {
                registers: 40,
                shared: 2048,
                spilled: 68,
                cap: None,
            }
        );
        assert_eq!(
            r["main_k1"],
            Resources {
                registers: 18,
                shared: 0,
                spilled: 0,
                cap: None,
            }
        );
        let capped = parse(&format!("{CAP_LINE}168\n{log}"));
        assert_eq!(capped["main_k1"].cap, Some(168));
    }
}
