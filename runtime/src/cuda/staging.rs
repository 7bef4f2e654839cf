//! Large host–device copies through two pinned staging buffers, so that the copy engine moves
//! page-locked memory at the link's rate while the host fills (or empties) the other buffer.
//!
//! A copy from pageable memory (the executor's arrays) is staged by the driver itself, one
//! synchronous piece at a time; that path is kept for copies below [`STAGED_FROM`] bytes, where
//! its latency is lower. Larger ones are cut into chunks of at most [`CHUNK`] bytes, alternating
//! between slot 0 and slot 1:
//!
//! - **To the device.** Chunk `i` waits for the slot's previous transfer (chunk `i - 2`), is
//!   copied into the slot by the host (in parallel pieces), and its transfer is queued. The call
//!   returns once the last chunk is queued: the source may be dropped then, since every byte of
//!   it is in a slot; the queued transfers run in order before any later launch or copy on the
//!   same stream.
//! - **To the host.** The transfer of chunk `i + 1` is queued before the host waits for chunk
//!   `i` and copies it out of its slot, so the link and the host overlap.
//!
//! Invariant (what the tests check against a device that runs transfers late): a slot's memory
//! is written by the host only after the transfer that last read it has finished, and read by
//! the host only after the transfer that last wrote it has finished.

use crate::error::Res;
use rayon::prelude::*;

/// Bytes of each of the two staging slots: the largest chunk of a staged copy.
pub const CHUNK: usize = 16 << 20;
/// Copies of at least this many bytes are staged; smaller ones go straight from pageable memory.
pub const STAGED_FROM: usize = 1 << 20;
/// Pieces of a chunk that the host copies in parallel.
const PIECE: usize = 1 << 20;

/// The device side of staged copies: two page-locked slots of [`CHUNK`] bytes and transfers
/// between them and device memory, queued in order on one stream.
pub trait Slots {
    /// Slot `k`'s memory (`k` is 0 or 1). Callers touch it only as the module header says.
    fn slot(&mut self, k: usize) -> &mut [u8];
    /// Queues the transfer of the first `len` bytes of slot `k` to device address `dst`.
    fn queue_to_device(&mut self, k: usize, dst: u64, len: usize) -> Res<()>;
    /// Queues the transfer of `len` bytes at device address `src` into slot `k`.
    fn queue_to_host(&mut self, k: usize, src: u64, len: usize) -> Res<()>;
    /// Waits until slot `k`'s last queued transfer has finished (at once if there is none).
    fn wait(&mut self, k: usize) -> Res<()>;
}

/// Copies `src` to device address `dst` through the slots.
pub fn upload(slots: &mut impl Slots, dst: u64, src: &[u8]) -> Res<()> {
    for (i, chunk) in src.chunks(CHUNK).enumerate() {
        let k = i % 2;
        slots.wait(k)?;
        parallel_copy(&mut slots.slot(k)[..chunk.len()], chunk);
        slots.queue_to_device(k, dst + (i * CHUNK) as u64, chunk.len())?;
    }
    Ok(())
}

/// Copies `dst.len()` bytes at device address `src` into `dst` through the slots.
pub fn download<S: Slots>(slots: &mut S, dst: &mut [u8], src: u64) -> Res<()> {
    let total = dst.len();
    let count = total.div_ceil(CHUNK);
    let len = |i: usize| CHUNK.min(total - i * CHUNK);
    // Chunk `i` goes into slot `i % 2`, whose previous transfer (chunk `i - 2`) was waited for
    // when that chunk was copied out.
    let queue =
        |slots: &mut S, i: usize| slots.queue_to_host(i % 2, src + (i * CHUNK) as u64, len(i));
    if count > 0 {
        queue(slots, 0)?;
    }
    for i in 0..count {
        if i + 1 < count {
            queue(slots, i + 1)?;
        }
        let k = i % 2;
        slots.wait(k)?;
        let n = len(i);
        parallel_copy(&mut dst[i * CHUNK..i * CHUNK + n], &slots.slot(k)[..n]);
    }
    Ok(())
}

/// `dst.copy_from_slice(src)`, in pieces on the thread pool.
fn parallel_copy(dst: &mut [u8], src: &[u8]) {
    dst.par_chunks_mut(PIECE)
        .zip(src.par_chunks(PIECE))
        .for_each(|(d, s)| d.copy_from_slice(s));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A device whose transfers run only when their slot is waited for, so that a slot the
    /// pipeline touched too early gives wrong bytes.
    struct LateDevice {
        memory: Vec<u8>,
        slots: [Vec<u8>; 2],
        pending: [Vec<Transfer>; 2],
        waits: usize,
    }

    enum Transfer {
        ToDevice { dst: usize, len: usize },
        ToHost { src: usize, len: usize },
    }

    impl LateDevice {
        fn new(bytes: usize) -> LateDevice {
            LateDevice {
                memory: vec![0; bytes],
                slots: [vec![0xee; CHUNK], vec![0xee; CHUNK]],
                pending: [Vec::new(), Vec::new()],
                waits: 0,
            }
        }
    }

    impl Slots for LateDevice {
        fn slot(&mut self, k: usize) -> &mut [u8] {
            &mut self.slots[k]
        }
        fn queue_to_device(&mut self, k: usize, dst: u64, len: usize) -> Res<()> {
            let dst = dst as usize;
            self.pending[k].push(Transfer::ToDevice { dst, len });
            Ok(())
        }
        fn queue_to_host(&mut self, k: usize, src: u64, len: usize) -> Res<()> {
            let src = src as usize;
            self.pending[k].push(Transfer::ToHost { src, len });
            Ok(())
        }
        fn wait(&mut self, k: usize) -> Res<()> {
            self.waits += 1;
            for t in std::mem::take(&mut self.pending[k]) {
                match t {
                    Transfer::ToDevice { dst, len } => {
                        self.memory[dst..dst + len].copy_from_slice(&self.slots[k][..len])
                    }
                    Transfer::ToHost { src, len } => {
                        self.slots[k][..len].copy_from_slice(&self.memory[src..src + len])
                    }
                }
            }
            Ok(())
        }
    }

    fn pattern(len: usize, seed: u8) -> Vec<u8> {
        (0..len)
            .map(|i| {
                (i as u8)
                    .wrapping_mul(31)
                    .wrapping_add(seed ^ (i >> 20) as u8)
            })
            .collect()
    }

    #[test]
    fn uploads_arrive_whole_when_transfers_run_late() {
        for len in [
            0,
            1,
            STAGED_FROM,
            CHUNK - 1,
            CHUNK,
            CHUNK + 1,
            2 * CHUNK,
            5 * CHUNK + 7,
        ] {
            let src = pattern(len, 3);
            let mut device = LateDevice::new(len + 64);
            upload(&mut device, 64, &src).unwrap();
            // What is still queued runs at the next waits (as a later launch would see it).
            device.wait(0).unwrap();
            device.wait(1).unwrap();
            assert!(device.memory[..64].iter().all(|&b| b == 0), "len {len}");
            assert!(device.memory[64..] == src[..], "len {len}");
        }
    }

    #[test]
    fn downloads_read_each_slot_after_its_transfer() {
        for len in [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK, 4 * CHUNK + 5] {
            let mut device = LateDevice::new(len + 8);
            device.memory[8..].copy_from_slice(&pattern(len, 9));
            let mut dst = vec![0u8; len];
            download(&mut device, &mut dst, 8).unwrap();
            assert!(dst == device.memory[8..], "len {len}");
            assert!(device.pending.iter().all(Vec::is_empty), "len {len}");
        }
    }

    #[test]
    fn an_upload_reuses_a_slot_only_after_waiting_for_it() {
        let len = 3 * CHUNK;
        let mut device = LateDevice::new(len);
        upload(&mut device, 0, &pattern(len, 1)).unwrap();
        // Chunk 2 reuses slot 0: one wait per chunk, and chunk 0's transfer ran before it.
        assert_eq!(device.waits, 3);
        assert_eq!(device.pending[0].len(), 1);
        assert_eq!(device.pending[1].len(), 1);
        assert!(device.memory[..CHUNK] == pattern(len, 1)[..CHUNK]);
    }
}
