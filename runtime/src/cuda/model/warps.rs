//! From the traces of a warp's 32 threads to the warp's memory requests, and what each costs.
//!
//! A thread's trace lists its loads and stores in program order, each with the site in the code
//! it came from and its loop path (which iteration of each enclosing loop of the generated code
//! it was in, `model.hpp`). The hardware runs a warp's threads in lockstep, so the `k`-th
//! execution of one site in the same loop iterations by each thread is one request of the warp:
//! requests are the groups of equal `(site, path, k)`, ordered by their first position in any
//! thread's trace. Threads that took another branch or left a loop earlier are simply absent
//! from a group (inactive lanes); a thread that has left an inner loop does not join another
//! still in it, in the next iteration of the outer loop, since their paths differ. This is exact
//! for code without divergence and the usual approximation (reconvergence at the end of each
//! branch and loop) with it. Loops of the prelude's helpers have no hooks: their iterations are
//! told apart by `k` alone.
//!
//! - **Global memory**: a request touches the 32-byte sectors its active lanes' bytes fall in;
//!   the ideal is the fewest sectors those bytes could fill (`ceil(distinct bytes / 32)`): a
//!   coalesced f32 load of 32 lanes takes 4, a load where each lane walks its own row 32.
//! - **Shared memory**: 32 banks of 4 bytes. Accesses of up to 4 bytes are served for all 32
//!   lanes at once, 8-byte ones for 16 lanes and 16-byte ones for 8 lanes at a time (a phase);
//!   a phase takes as many wavefronts as the most distinct 4-byte words any bank must deliver
//!   (lanes reading the same word share it). The ideal is one wavefront per phase.

use std::collections::HashMap;

/// One load or store of a thread, as the instrumentation writes it (`model.hpp`, `og_rec`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rec {
    pub addr: u64,
    /// The access's site in the code (a return address, truncated).
    pub site: u32,
    pub size: u8,
    /// Bit 0: a store; bit 1: shared memory.
    pub kind: u8,
    /// The thread's loop path: which iteration of each loop of the generated code it was in
    /// (hashed, folded to 16 bits; 0 outside loops or where code has no loop hooks).
    pub path: u16,
}

impl Rec {
    pub fn store(&self) -> bool {
        self.kind & 1 != 0
    }

    pub fn shared(&self) -> bool {
        self.kind & 2 != 0
    }
}

/// One request of a warp: the active lanes' addresses (one each) and the access's shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub addrs: Vec<u64>,
    pub size: u64,
    pub store: bool,
    pub shared: bool,
}

/// The requests of a warp whose lanes' traces are `lanes`, in program order, each with its
/// site's number. `sites` numbers the sites densely in order of first execution (kept across
/// warps).
pub fn requests(lanes: &[&[Rec]], sites: &mut HashMap<u32, u32>) -> Vec<(usize, Request)> {
    // ((site, path, k), first position, lane's access)
    let mut entries: Vec<((u32, u16, u32), usize, Rec)> = Vec::new();
    for trace in lanes {
        let mut seen: HashMap<(u32, u16), u32> = HashMap::new();
        for (pos, rec) in trace.iter().enumerate() {
            let next = sites.len() as u32;
            let site = *sites.entry(rec.site).or_insert(next);
            let k = seen.entry((site, rec.path)).or_insert(0);
            entries.push(((site, rec.path, *k), pos, *rec));
            *k += 1;
        }
    }
    entries.sort_by_key(|e| e.0);
    let mut groups: Vec<(usize, usize, Request)> = Vec::new();
    for chunk in entries.chunk_by(|a, b| a.0 == b.0) {
        let first = chunk
            .iter()
            .map(|e| e.1)
            .min()
            .expect("groups are not empty");
        let r = chunk[0].2;
        groups.push((
            first,
            chunk[0].0.0 as usize,
            Request {
                addrs: chunk.iter().map(|e| e.2.addr).collect(),
                size: u64::from(r.size.max(1)),
                store: r.store(),
                shared: r.shared(),
            },
        ));
    }
    groups.sort_by_key(|g| g.0);
    groups.into_iter().map(|g| (g.1, g.2)).collect()
}

/// The sectors a global request touches (sorted, distinct) and the ideal number.
pub fn sectors(r: &Request) -> (Vec<u64>, u64) {
    let mut touched: Vec<u64> = r
        .addrs
        .iter()
        .flat_map(|&a| (a >> 5)..=((a + r.size - 1) >> 5))
        .collect();
    touched.sort_unstable();
    touched.dedup();
    let mut distinct = r.addrs.clone();
    distinct.sort_unstable();
    distinct.dedup();
    let ideal = (distinct.len() as u64 * r.size).div_ceil(32);
    (touched, ideal)
}

/// The wavefronts a shared-memory request takes and the ideal number (one per phase).
pub fn wavefronts(r: &Request) -> (u64, u64) {
    let lanes_per_phase = (128 / r.size.clamp(4, 16)) as usize;
    let words = r.size.div_ceil(4);
    let (mut total, mut ideal) = (0, 0);
    for phase in r.addrs.chunks(lanes_per_phase) {
        let mut by_bank: Vec<Vec<u64>> = vec![Vec::new(); 32];
        for &a in phase {
            for w in 0..words {
                let word = (a >> 2) + w;
                let bank = &mut by_bank[(word % 32) as usize];
                if !bank.contains(&word) {
                    bank.push(word);
                }
            }
        }
        total += by_bank.iter().map(Vec::len).max().unwrap_or(0).max(1) as u64;
        ideal += 1;
    }
    (total, ideal)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(addr: u64, site: u32, size: u8, kind: u8) -> Rec {
        Rec {
            addr,
            site,
            size,
            kind,
            path: 0,
        }
    }

    /// A load of 4 bytes at `addr`, site 5, in loop iterations `path`.
    fn load_in(addr: u64, path: u16) -> Rec {
        Rec {
            path,
            ..rec(addr, 5, 4, 0)
        }
    }

    fn request(addrs: impl IntoIterator<Item = u64>, size: u64, shared: bool) -> Request {
        Request {
            addrs: addrs.into_iter().collect(),
            size,
            store: false,
            shared,
        }
    }

    #[test]
    fn a_coalesced_f32_load_takes_4_sectors_and_walked_rows_32() {
        let base = 1 << 20;
        let coalesced = request((0..32).map(|l| base + 4 * l), 4, false);
        assert_eq!(sectors(&coalesced).0.len(), 4);
        assert_eq!(sectors(&coalesced).1, 4);
        // Each lane at element t of its own row of 256 f32.
        let rows = request((0..32).map(|l| base + 1024 * l + 4 * 7), 4, false);
        assert_eq!((sectors(&rows).0.len(), sectors(&rows).1), (32, 4));
        // All lanes at one address: one sector, ideally one.
        let uniform = request((0..32).map(|_| base + 8), 8, false);
        assert_eq!((sectors(&uniform).0.len(), sectors(&uniform).1), (1, 1));
    }

    #[test]
    fn strided_shared_accesses_have_known_bank_conflicts() {
        // 4-byte words with a stride of s words: gcd(s, 32)-way conflicts.
        for (stride, ways) in [(1, 1), (2, 2), (3, 1), (4, 4), (8, 8), (32, 32), (33, 1)] {
            let r = request((0..32).map(|l| 4 * stride * l), 4, true);
            assert_eq!(wavefronts(&r), (ways, 1), "stride {stride}");
        }
        // A broadcast is free; f64 with stride 1 takes its two phases without conflicts.
        assert_eq!(wavefronts(&request((0..32).map(|_| 64), 4, true)), (1, 1));
        assert_eq!(
            wavefronts(&request((0..32).map(|l| 8 * l), 8, true)),
            (2, 2)
        );
        assert_eq!(
            wavefronts(&request((0..32).map(|l| 16 * l), 8, true)),
            (4, 2)
        );
    }

    #[test]
    fn requests_group_the_kth_execution_of_each_site_across_lanes() {
        // Lane 0 runs a loop twice, lane 1 once; both then store at site 9.
        let lane0 = [rec(100, 5, 4, 0), rec(104, 5, 4, 0), rec(300, 9, 4, 1)];
        let lane1 = [rec(200, 5, 4, 0), rec(400, 9, 4, 1)];
        let reqs = requests(&[&lane0, &lane1], &mut HashMap::new());
        let addrs: Vec<(usize, Vec<u64>)> =
            reqs.iter().map(|(s, r)| (*s, r.addrs.clone())).collect();
        assert_eq!(
            addrs,
            vec![(0, vec![100, 200]), (0, vec![104]), (1, vec![300, 400])]
        );
        assert!(reqs[2].1.store && !reqs[0].1.store);
    }

    #[test]
    fn a_lane_that_left_an_inner_loop_does_not_join_another_still_in_it() {
        // Two outer iterations of an inner loop that runs once in lane 0 and twice in lane 1
        // (paths 1, 2 in the first outer iteration, 3, 4 in the second): lane 0's second load
        // is in the second outer iteration, lane 1's in the first, so they are two requests.
        let lane0 = [load_in(100, 1), load_in(104, 3)];
        let lane1 = [
            load_in(200, 1),
            load_in(204, 2),
            load_in(208, 3),
            load_in(212, 4),
        ];
        let reqs = requests(&[&lane0, &lane1], &mut HashMap::new());
        let addrs: Vec<Vec<u64>> = reqs.iter().map(|(_, r)| r.addrs.clone()).collect();
        assert_eq!(
            addrs,
            vec![vec![100, 200], vec![204], vec![104, 208], vec![212]]
        );
    }
}
