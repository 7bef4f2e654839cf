//! The GPUs the performance model knows: the figures of each that the estimate uses, from the
//! vendors' data sheets and whitepapers (SMs, clocks, peak rates, memory bandwidth, cache and
//! register file sizes, occupancy limits) and from published microbenchmarks (latencies, L2
//! bandwidth), plus the model's own calibrated costs of host-side steps (launches, transfers,
//! allocations). `docs/cuda.md` lists the sources and what was calibrated.
//!
//! `OGHAM_GPU_MODEL` picks one by name (`h100`, the default, `h200`, `a100`, `rtx2080ti`).

use crate::cuda::registers::Sm;

/// One GPU, as the model sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Gpu {
    /// The name `OGHAM_GPU_MODEL` takes.
    pub key: &'static str,
    /// The product's name, for reports.
    pub name: &'static str,
    /// The architecture NVRTC compiles for (ptxas's register report).
    pub arch: &'static str,
    pub sms: i64,
    /// Boost clock, Hz.
    pub clock: f64,
    /// Peak FP32 and FP64 rates (non-tensor), flop/s.
    pub fp32: f64,
    pub fp64: f64,
    /// Special-function results per SM per clock (roots, exponentials, trigonometry).
    pub special_per_sm_clock: f64,
    /// DRAM bandwidth and the L2's, bytes/s.
    pub dram_bandwidth: f64,
    pub l2_bandwidth: f64,
    pub l2_bytes: f64,
    /// The unified L1/shared-memory array of one SM, and the most of it shared memory may take.
    pub l1_bytes: f64,
    pub shared_per_sm: i64,
    pub registers_per_sm: i64,
    pub max_threads_per_sm: i64,
    pub max_blocks_per_sm: i64,
    /// Latencies of a load served by L1, L2 and DRAM, cycles.
    pub l1_latency: f64,
    pub l2_latency: f64,
    pub dram_latency: f64,
    /// Device memory, bytes.
    pub memory: usize,
    /// Host-device copies from and to pageable memory (the executor's arrays): bandwidth
    /// (bytes/s, [`PAGEABLE_COPIES`]) and the fixed cost of one synchronous copy (s).
    pub copy_bandwidth: f64,
    pub copy_latency: f64,
    /// Copies staged through pinned slots (a megabyte or more, `staging.rs`): the PCIe link's
    /// rate for page-locked memory, from its data sheet at 80 % (not yet measured).
    pub staged_bandwidth: f64,
    /// A launch and the wait for it (s); an allocation and its free (s), on the host.
    pub launch_latency: f64,
    pub alloc_latency: f64,
    /// The host's time to queue a launch or a fill without waiting for it (s;
    /// what `cuLaunchKernel` typically costs the calling thread; an assumption, not yet
    /// measured).
    pub enqueue_latency: f64,
}

impl Gpu {
    /// What one SM holds, for the register caps (`registers.rs`).
    pub fn sm(&self) -> Sm {
        Sm {
            registers: self.registers_per_sm,
            threads: self.max_threads_per_sm,
            blocks: self.max_blocks_per_sm,
        }
    }
}

const GB: f64 = 1e9;
/// Bytes a second that a launch's operands and results take to move between the host's arrays
/// and the GPU: synchronous copies of pageable memory (staged by the driver) together with the
/// executor's own handling of each array around them. One constant, fitted to the four runs
/// recorded on an H200 (BFAST D2, D5, Peru; STL): `docs/cuda.md`, "Calibration". The same on
/// every GPU of the table, as the host bounds it.
pub const PAGEABLE_COPIES: f64 = 2.9 * GB;
const TB: f64 = 1e12;
const MIB: f64 = (1 << 20) as f64;
const KIB: f64 = 1024.0;

/// Hopper (sm_90) as in the H100 SXM5; the H200 differs in memory only.
const H100: Gpu = Gpu {
    key: "h100",
    name: "NVIDIA H100 SXM5 80 GB",
    arch: "sm_90",
    sms: 132,
    clock: 1.98e9,
    fp32: 66.9 * TB,
    fp64: 33.5 * TB,
    special_per_sm_clock: 16.0,
    dram_bandwidth: 3.35 * TB,
    l2_bandwidth: 8.0 * TB,
    l2_bytes: 50.0 * MIB,
    l1_bytes: 256.0 * KIB,
    shared_per_sm: 228 << 10,
    registers_per_sm: 65536,
    max_threads_per_sm: 2048,
    max_blocks_per_sm: 32,
    l1_latency: 35.0,
    l2_latency: 260.0,
    dram_latency: 650.0,
    memory: 80 << 30,
    copy_bandwidth: PAGEABLE_COPIES,
    copy_latency: 12e-6,
    // PCIe 5.0 x16: 64 GB/s.
    staged_bandwidth: 51.0 * GB,
    launch_latency: 6e-6,
    alloc_latency: 40e-6,
    enqueue_latency: 3e-6,
};

/// The devices of the table, the default first. The others take from the H100 what does not
/// differ: the special-function rate, the register file, the occupancy limits (A100), and the
/// host-side costs other than the PCIe link's.
pub const GPUS: [Gpu; 4] = [
    H100,
    Gpu {
        key: "h200",
        name: "NVIDIA H200 141 GB",
        dram_bandwidth: 4.8 * TB,
        memory: 141 << 30,
        ..H100
    },
    Gpu {
        key: "a100",
        name: "NVIDIA A100 SXM4 80 GB",
        arch: "sm_80",
        sms: 108,
        clock: 1.41e9,
        fp32: 19.5 * TB,
        fp64: 9.7 * TB,
        dram_bandwidth: 2.039 * TB,
        l2_bandwidth: 5.0 * TB,
        l2_bytes: 40.0 * MIB,
        l1_bytes: 192.0 * KIB,
        shared_per_sm: 164 << 10,
        l1_latency: 33.0,
        l2_latency: 200.0,
        dram_latency: 560.0,
        memory: 80 << 30,
        // PCIe 4.0 x16: 32 GB/s.
        staged_bandwidth: 25.6 * GB,
        ..H100
    },
    Gpu {
        key: "rtx2080ti",
        name: "NVIDIA GeForce RTX 2080 Ti",
        arch: "sm_75",
        sms: 68,
        clock: 1.545e9,
        fp32: 13.4 * TB,
        fp64: 0.42 * TB,
        dram_bandwidth: 616.0 * GB,
        l2_bandwidth: 1.8 * TB,
        l2_bytes: 5.5 * MIB,
        l1_bytes: 96.0 * KIB,
        shared_per_sm: 64 << 10,
        max_threads_per_sm: 1024,
        max_blocks_per_sm: 16,
        l1_latency: 32.0,
        l2_latency: 190.0,
        dram_latency: 500.0,
        memory: 11 << 30,
        // PCIe 3.0 x16: 16 GB/s.
        staged_bandwidth: 12.8 * GB,
        ..H100
    },
];

/// The device `OGHAM_GPU_MODEL` names (default `h100`), or an error listing the known ones.
pub fn from_env() -> Result<&'static Gpu, String> {
    match std::env::var("OGHAM_GPU_MODEL") {
        Err(_) => Ok(&GPUS[0]),
        Ok(name) => by_key(&name),
    }
}

/// The device called `key` (case-insensitive), or an error listing the known ones.
pub fn by_key(key: &str) -> Result<&'static Gpu, String> {
    let wanted = key.trim().to_ascii_lowercase();
    GPUS.iter().find(|g| g.key == wanted).ok_or_else(|| {
        let known: Vec<&str> = GPUS.iter().map(|g| g.key).collect();
        format!(
            "OGHAM_GPU_MODEL: unknown GPU `{key}` (known: {})",
            known.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_the_h100_and_names_are_checked() {
        assert_eq!(by_key("H200").unwrap().dram_bandwidth, 4.8 * TB);
        assert_eq!(GPUS[0].key, "h100");
        let err = by_key("v100").unwrap_err();
        assert!(err.contains("h100, h200, a100, rtx2080ti"), "{err}");
    }
}
