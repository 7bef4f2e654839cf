//! `OGHAM_PROFILE`'s lines of the model: each kernel's modelled time and counts (with
//! `OGHAM_PROFILE=sites`, its launches' costliest accesses and their lines of code), and the
//! run's total, with the side queue's copies when an entry point ran in parts of rows.

use super::code::Code;
use super::{KernelReport, LaunchReport, Report, Site};

/// How many sites `OGHAM_PROFILE=sites` lists per launch.
const LISTED_SITES: usize = 8;

/// `OGHAM_PROFILE`'s lines for one kernel (with `code`, its launches' costliest sites too).
pub(super) fn profile_lines(k: &KernelReport, code: Option<&Code>) -> Vec<String> {
    let mut lines = vec![format!(
        "kernel {} ({}) modeled {:.3} ms: {} launch(es), {} copies of {:.1} MB, {} allocations of {:.1} MB, {} data steps of {:.1} MB",
        k.name,
        k.level,
        k.seconds * 1e3,
        k.launches.len(),
        k.copies,
        k.copied_bytes as f64 / 1e6,
        k.allocations,
        k.allocated_bytes as f64 / 1e6,
        k.device_steps,
        k.device_step_bytes as f64 / 1e6
    )];
    for l in &k.launches {
        let c = &l.counts;
        lines.push(format!(
            "  {}: {} blocks, {} registers{}, {} warps/SM ({}-limited), {} wave(s); {:.3} ms, bound by {}",
            l.kernel,
            l.blocks,
            l.resources.registers,
            match l.resources.cap {
                Some(cap) => format!(" (capped at {cap})"),
                None => String::new(),
            },
            l.occupancy.warps_per_sm,
            l.occupancy.limit,
            l.occupancy.waves,
            l.estimate.seconds * 1e3,
            l.estimate.bound
        ));
        let terms: Vec<String> = l
            .estimate
            .terms
            .iter()
            .map(|(t, name)| format!("{name} {:.3}", t * 1e3))
            .collect();
        lines.push(format!("  limits (ms): {}", terms.join(", ")));
        lines.push(format!(
            "  requests {:.0}, sectors {:.0} (ideal {:.0}: coalescing {:.2}), L1 hits {:.0}, DRAM {:.1} MB, L2 {:.1} MB, \
             shared wavefronts {:.0} (ideal {:.0}), shuffles {:.0}, flops {:.3e} f32 {:.3e} f64 {:.3e} special; \
             {} of {:.0} warps sampled",
            c.requests,
            c.sectors,
            c.ideal_sectors,
            c.ideal_sectors / c.sectors.max(1.0),
            c.l1_hits,
            c.dram_bytes / 1e6,
            c.l2_sectors * 32.0 / 1e6,
            c.wavefronts,
            c.ideal_wavefronts,
            c.shuffles,
            c.flops32,
            c.flops64,
            c.special,
            l.sampled_warps,
            c.warps
        ));
        if let Some(code) = code {
            lines.extend(site_lines(l, code));
        }
    }
    lines
}

/// The [`LISTED_SITES`] sites of launch `l` with the most load latency (then sectors), each
/// with its share of the launch's, its counts in the sampled warps and its line of `code`.
fn site_lines(l: &LaunchReport, code: &Code) -> Vec<String> {
    let mut sites: Vec<&Site> = l.sites.iter().collect();
    sites.sort_by(|a, b| {
        (b.load_latency, b.sectors)
            .partial_cmp(&(a.load_latency, a.sectors))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    sites.truncate(LISTED_SITES);
    let offsets: Vec<u64> = sites.iter().map(|s| code.offset(s.address)).collect();
    let found = match code.lines(&offsets) {
        Ok(found) => found,
        Err(why) => return vec![format!("  sites: {why}")],
    };
    let latency: f64 = l.sites.iter().map(|s| s.load_latency).sum();
    let sectors: u64 = l.sites.iter().map(|s| s.sectors).sum();
    let share = |part: f64, whole: f64| 100.0 * part / whole.max(1.0);
    sites
        .iter()
        .zip(found)
        .map(|(s, frames)| {
            let (at, text) = match frames.as_slice() {
                [] => (format!("offset {:#x}", code.offset(s.address)), ""),
                [line] => (format!("line {line}"), code.text(*line)),
                [line, .., call] => (
                    format!("line {line} (inlined, called at line {call})"),
                    code.text(*call),
                ),
            };
            format!(
                "  site {at} ({} {} B): latency {:.0} %, sectors {:.0} %, {} requests, {} sectors (ideal {}): {text}",
                if s.store { "store" } else { "load" },
                s.size,
                share(s.load_latency, latency),
                share(s.sectors as f64, sectors as f64),
                s.requests,
                s.sectors,
                s.ideal_sectors,
            )
        })
        .collect()
}

/// `OGHAM_PROFILE`'s last line.
pub fn total_line(report: &Report) -> String {
    let side = report.side.map_or(String::new(), |s| {
        format!(
            " ({} copies of {:.1} MB beside the kernels, {:.3} ms, of which the kernels waited \
             {:.3} ms)",
            s.copies,
            s.bytes as f64 / 1e6,
            s.seconds * 1e3,
            s.waited * 1e3
        )
    });
    format!(
        "modeled total {:.3} ms on {}{side}",
        report.total_seconds() * 1e3,
        report.device
    )
}
