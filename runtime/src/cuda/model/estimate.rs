//! A launch's modelled time, from its counts: occupancy from the block size, the kernel's
//! registers and shared memory (and, from the same occupancy, the block size a thread-level
//! kernel gets: [`thread_block`]); then a roofline over the throughput limits the counts imply
//! (DRAM, L2, L1 line lookups, shared memory, FP32/FP64/special-function units, instruction
//! issue, slower when a scheduler has fewer warps than `DEPENDENT_LATENCY` cycles to hide) and a
//! latency term for launches with too little parallelism to hide memory latency. The time is
//! the largest of them, plus the part of the latency path and the throughput limits that does
//! not overlap when a scheduler has fewer than `HIDING_WARPS` warps, plus the launch's own cost;
//! the largest names the bound.
//!
//! The latency term, a warp's critical path: its load requests served one after another,
//! `MEMORY_PARALLELISM` in flight at once (independent loads the compiler issues ahead), each at
//! the latency of the level that served its slowest sector (L1, L2 or DRAM, as the caches gave)
//! plus a clock per 128-byte line the L1 looked up for it; stores do not wait; and its
//! instructions at `LONE_WARP_CPI`. The SM
//! overlaps all its resident warps, so each wave of resident blocks takes one warp's path.

use super::gpus::Gpu;
use super::ptxas::Resources;
use crate::cuda::device::{ThreadBlock, fullest_block};
use crate::cuda::registers::blocks_by_registers;

/// Independent memory requests a warp has in flight (calibrated: `docs/cuda.md`).
pub const MEMORY_PARALLELISM: f64 = 1.0;
/// Warp instructions besides the loads, stores and float operations, per counted one (index
/// arithmetic, compares, branches), for the issue limit (calibrated: `docs/cuda.md`).
pub const OTHER_INSTRUCTIONS: f64 = 3.0;

/// Cycles between dependent arithmetic instructions of one warp (Volta and later: 4–6).
pub const DEPENDENT_LATENCY: f64 = 4.0;

/// Clocks per instruction of a warp that waits for its own results (dependent arithmetic takes
/// about 4, independent instructions issue every clock).
pub const LONE_WARP_CPI: f64 = 2.0;

/// Warps per scheduler from which the latency path hides wholly under the throughput limits
/// (and they under it).
pub const HIDING_WARPS: f64 = 8.0;

/// What a launch asks of the device: its shape and resources.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shape {
    pub blocks: i64,
    pub threads_per_block: i64,
    pub registers_per_thread: i64,
    pub shared_per_block: i64,
}

/// Where the resident blocks sit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Occupancy {
    /// Blocks one SM can hold at once (the tightest of the limits).
    pub blocks_per_sm: i64,
    /// Warps resident on a busy SM, and on the whole device at once.
    pub warps_per_sm: i64,
    pub warps_on_device: i64,
    /// Rounds of resident blocks the grid takes.
    pub waves: i64,
    /// SMs with work.
    pub sms_used: i64,
    /// Which limit decided the warps resident on a busy SM (`grid`: the grid is too small to
    /// fill it).
    pub limit: &'static str,
}

pub fn occupancy(gpu: &Gpu, s: &Shape) -> Occupancy {
    let warps_per_block = (s.threads_per_block + 31) / 32;
    let mut limits = vec![
        (gpu.max_blocks_per_sm, "blocks"),
        (gpu.max_threads_per_sm / (warps_per_block * 32), "threads"),
        (
            blocks_by_registers(
                gpu.registers_per_sm,
                s.registers_per_thread,
                warps_per_block,
            ),
            "registers",
        ),
    ];
    if s.shared_per_block > 0 {
        limits.push((gpu.shared_per_sm / s.shared_per_block, "shared memory"));
    }
    let (blocks_per_sm, limit) = limits
        .into_iter()
        .min_by_key(|l| l.0)
        .expect("limits are not empty");
    let blocks_per_sm = blocks_per_sm.max(1);
    let sms_used = s.blocks.clamp(1, gpu.sms);
    let resident_blocks = blocks_per_sm.min((s.blocks + gpu.sms - 1) / gpu.sms).max(1);
    let limit = if resident_blocks < blocks_per_sm {
        "grid"
    } else {
        limit
    };
    Occupancy {
        blocks_per_sm,
        warps_per_sm: resident_blocks * warps_per_block,
        warps_on_device: (resident_blocks * sms_used * warps_per_block)
            .min(s.blocks * warps_per_block),
        waves: (s.blocks + blocks_per_sm * gpu.sms - 1) / (blocks_per_sm * gpu.sms),
        sms_used,
        limit,
    }
}

/// The blocks of a thread-level kernel with `resources` on `gpu`: [`fullest_block`] of `most`
/// threads at the occupancy [`occupancy`] finds.
pub fn thread_block(gpu: &Gpu, resources: Resources, most: i64) -> ThreadBlock {
    let Ok(block) = fullest_block(most, |size| {
        let shape = Shape {
            blocks: i64::MAX / most.max(1),
            threads_per_block: size,
            registers_per_thread: resources.registers,
            shared_per_block: resources.shared,
        };
        Ok::<_, std::convert::Infallible>(occupancy(gpu, &shape).blocks_per_sm)
    });
    block
}

/// A launch's counts, scaled to the whole grid where the model sampled warps.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Counts {
    pub warps: f64,
    /// Global loads and stores, as warp requests.
    pub requests: f64,
    pub sectors: f64,
    /// The 128-byte lines the requests touch (the L1 looks up one a clock).
    pub lines: f64,
    pub ideal_sectors: f64,
    /// Sectors that reached L2 (L1 misses and stores), L2's hits, DRAM bytes.
    pub l2_sectors: f64,
    pub l2_hits: f64,
    pub l1_hits: f64,
    pub dram_bytes: f64,
    /// The latencies of the global load requests, summed (cycles).
    pub load_latency: f64,
    pub shared_requests: f64,
    pub wavefronts: f64,
    pub ideal_wavefronts: f64,
    /// Float operations (not scaled: every thread counts its own).
    pub flops32: f64,
    pub flops64: f64,
    pub special: f64,
    /// Warp shuffles (every thread's, counted as warp instructions of 32 lanes).
    pub shuffles: f64,
}

/// A launch's modelled time and what bounds it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub seconds: f64,
    pub bound: &'static str,
    /// Every limit's time (seconds), in a fixed order: DRAM, L2, L1, shared memory, compute,
    /// issue, latency.
    pub terms: [(f64, &'static str); 7],
}

pub fn estimate(gpu: &Gpu, occ: &Occupancy, c: &Counts) -> Estimate {
    let share = occ.sms_used as f64 / gpu.sms as f64;
    let per_clock = |per_sm: f64| per_sm * occ.sms_used as f64 * gpu.clock;
    let warp_instructions =
        (c.requests + c.shared_requests + c.shuffles + (c.flops32 + c.flops64 + c.special) / 32.0)
            * (1.0 + OTHER_INSTRUCTIONS);
    let per_scheduler = occ.warps_per_sm as f64 / 4.0;
    let issue_rate = (per_scheduler / DEPENDENT_LATENCY).min(1.0);
    // One warp's critical path, cycles: its loads' latencies, its L1 line lookups, and its
    // instructions at the rate of a warp that waits for its own results.
    let path = (c.load_latency / MEMORY_PARALLELISM + c.lines + warp_instructions * LONE_WARP_CPI)
        / c.warps.max(1.0);
    let terms = [
        (c.dram_bytes / gpu.dram_bandwidth, "DRAM"),
        (c.l2_sectors * 32.0 / (gpu.l2_bandwidth * share), "L2"),
        (c.lines / per_clock(1.0), "L1"),
        // A shuffle is no memory access, but it takes the crossbar that shared memory's
        // wavefronts take (32 lanes a clock per SM).
        (
            (c.wavefronts + c.shuffles) / per_clock(1.0),
            "shared memory",
        ),
        (
            c.flops32 / (gpu.fp32 * share)
                + c.flops64 / (gpu.fp64 * share)
                + c.special / per_clock(gpu.special_per_sm_clock),
            "compute",
        ),
        // Four schedulers, one warp instruction a clock each at best; a scheduler with fewer
        // warps than the latency of dependent instructions waits between them.
        (warp_instructions / per_clock(4.0 * issue_rate), "issue"),
        (occ.waves as f64 * path / gpu.clock, "latency"),
    ];
    let (seconds, bound) =
        terms.into_iter().fold(
            (0.0, "launch"),
            |best, t| if t.0 > best.0 { t } else { best },
        );
    // What the largest limit does not hide: with fewer than `HIDING_WARPS` warps per scheduler,
    // the latency path and the throughput limits overlap only in proportion.
    let latency = terms[6].0;
    let throughput = terms[..6].iter().map(|t| t.0).fold(0.0, f64::max);
    let exposed = (1.0 - per_scheduler / HIDING_WARPS).max(0.0) * latency.min(throughput);
    Estimate {
        seconds: seconds + exposed + gpu.launch_latency,
        bound,
        terms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::model::gpus::GPUS;

    #[test]
    fn occupancy_follows_the_tightest_limit() {
        let h100 = &GPUS[0];
        let shape = |regs, shared| Shape {
            blocks: 10_000,
            threads_per_block: 256,
            registers_per_thread: regs,
            shared_per_block: shared,
        };
        let o = occupancy(h100, &shape(32, 0));
        assert_eq!(
            (o.blocks_per_sm, o.warps_per_sm, o.limit),
            (8, 64, "threads")
        );
        let o = occupancy(h100, &shape(128, 0));
        assert_eq!((o.blocks_per_sm, o.limit), (2, "registers"));
        let o = occupancy(h100, &shape(32, 100 << 10));
        assert_eq!((o.blocks_per_sm, o.limit), (2, "shared memory"));
        // 65,536 threads on 132 SMs: 256 blocks, two on most SMs, one wave.
        let o = occupancy(
            h100,
            &Shape {
                blocks: 256,
                ..shape(64, 0)
            },
        );
        assert_eq!((o.waves, o.warps_per_sm, o.sms_used), (1, 16, 132));
    }

    #[test]
    fn a_streaming_kernel_is_bound_by_dram() {
        let h200 = &GPUS[1];
        let n = 1e9 / 4.0;
        let occ = occupancy(
            h200,
            &Shape {
                blocks: 1_000_000,
                threads_per_block: 256,
                registers_per_thread: 16,
                shared_per_block: 0,
            },
        );
        let c = Counts {
            warps: n / 32.0,
            requests: 2.0 * n / 32.0,
            sectors: 2.0 * n / 8.0,
            ideal_sectors: 2.0 * n / 8.0,
            l2_sectors: 2.0 * n / 8.0,
            dram_bytes: 2e9,
            flops32: n,
            ..Counts::default()
        };
        let e = estimate(h200, &occ, &c);
        assert_eq!(e.bound, "DRAM");
        assert!((e.seconds - 2e9 / 4.8e12).abs() < 1e-5, "{e:?}");
    }

    /// The H200's SM holds 65,536 registers, allocated per warp in units of 256, 2,048 threads
    /// and 32 blocks.
    #[test]
    fn thread_level_blocks_are_the_size_at_which_an_sm_holds_the_most_warps() {
        let h200 = &GPUS[1];
        let block = |registers| {
            let resources = Resources {
                registers,
                shared: 0,
                spilled: 0,
                cap: None,
            };
            thread_block(h200, resources, 256).threads
        };
        // Few registers: 8 blocks of 256 threads fill the SM's 64 warps.
        assert_eq!(block(32), 256);
        // 128 registers: 16 warps in two blocks of 256, as in smaller ones.
        assert_eq!(block(128), 256);
        // STL's thread-level trend smoothing (136): 15 warps fit, 8 in blocks of 256 and 14 in
        // blocks of 64; 15 in blocks of one warp.
        assert_eq!(block(136), 32);
        // 168 registers: 12 warps fit, in blocks of 128 (three) as in smaller ones.
        assert_eq!(block(168), 128);
        // 178 (STL's thread-level loess): 11 warps fit, 8 in blocks of 256, 10 in blocks of 64.
        assert_eq!(block(178), 32);
        // 255: 8 warps, one block of 256.
        assert_eq!(block(255), 256);
    }
}
