//! A cache of 32-byte sectors for the performance model's L1 and L2: set-associative (16 ways,
//! least recently used out), sets picked by a multiplicative hash of the sector number (the
//! hardware hashes addresses too, so power-of-two strides such as the 64 KiB between per-thread
//! arenas do not all fall into one set). Stores allocate and mark their sector dirty (write-back,
//! the L2's policy); a dirty sector leaving the cache, or left at the end, is written to DRAM.

const WAYS: usize = 16;

#[derive(Clone, Copy, Default)]
struct Way {
    /// The sector number plus one (0: empty).
    tag: u64,
    last_use: u64,
    dirty: bool,
}

pub struct SectorCache {
    sets: Vec<[Way; WAYS]>,
    clock: u64,
}

/// What one access did.
#[derive(Debug, PartialEq, Eq)]
pub struct Outcome {
    pub hit: bool,
    /// A dirty sector was evicted (a DRAM write).
    pub wrote_back: bool,
}

impl SectorCache {
    /// A cache of about `bytes` bytes (at least one set).
    pub fn new(bytes: f64) -> SectorCache {
        let sectors = (bytes / 32.0).max(WAYS as f64) as usize;
        SectorCache {
            sets: vec![[Way::default(); WAYS]; (sectors / WAYS).max(1)],
            clock: 0,
        }
    }

    /// Reads (`store` false) or writes sector `sector`.
    pub fn access(&mut self, sector: u64, store: bool) -> Outcome {
        self.clock += 1;
        let index = (sector.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 20) as usize % self.sets.len();
        let set = &mut self.sets[index];
        let tag = sector + 1;
        if let Some(way) = set.iter_mut().find(|w| w.tag == tag) {
            way.last_use = self.clock;
            way.dirty |= store;
            return Outcome {
                hit: true,
                wrote_back: false,
            };
        }
        let victim = set
            .iter_mut()
            .min_by_key(|w| (w.tag != 0, w.last_use))
            .expect("sets have ways");
        let wrote_back = victim.tag != 0 && victim.dirty;
        *victim = Way {
            tag,
            last_use: self.clock,
            dirty: store,
        };
        Outcome {
            hit: false,
            wrote_back,
        }
    }

    /// The dirty sectors still held (written to DRAM at the end).
    pub fn dirty(&self) -> u64 {
        self.sets
            .iter()
            .flat_map(|s| s.iter())
            .filter(|w| w.tag != 0 && w.dirty)
            .count() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reuse_within_capacity_hits_and_a_stream_past_it_misses() {
        let mut c = SectorCache::new(32.0 * 1024.0);
        for s in 0..512 {
            assert!(!c.access(s, false).hit);
        }
        assert!((0..512).all(|s| c.access(s, false).hit));
        // 64 times the capacity streamed through: the first sectors are gone.
        for s in 1000..1000 + 64 * 1024 {
            c.access(s, false);
        }
        assert!((0..512).filter(|&s| c.access(s, false).hit).count() < 16);
    }

    #[test]
    fn dirty_sectors_are_written_back_once() {
        let mut c = SectorCache::new(512.0);
        c.access(7, true);
        c.access(7, true);
        assert_eq!(c.dirty(), 1);
        let written: usize = (100..100 + 64)
            .filter(|&s| c.access(s, false).wrote_back)
            .count();
        assert_eq!((written, c.dirty()), (1, 0));
    }
}
